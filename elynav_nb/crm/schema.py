"""CRM database schema: the DDL of every version, applied in order through ``PRAGMA user_version``.

Where it sits: pure text, read by ``database.py`` when it opens a database. ``MIGRATIONS[n - 1]``
takes a database from version ``n - 1`` to ``n``; each script runs in one transaction and ends by
setting ``user_version``. A released script is never edited: a change is a new script appended
to ``MIGRATIONS``. A database whose ``user_version`` is above ``SCHEMA_VERSION`` was written by
a newer elynav_nb and is refused (never downgraded).

Tables: accounts, contacts, activities, opportunities, plus two FTS5 indexes (accounts_search,
contacts_search) kept in step by triggers. Timestamps are UTC text ``YYYY-MM-DDTHH:MM:SSZ``
(so text order is time order); ``close_date`` is ``YYYY-MM-DD``; amounts are euros.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "TABLES"]

TABLES: tuple[str, ...] = ("accounts", "contacts", "activities", "opportunities")

_VERSION_1 = """
BEGIN IMMEDIATE;

CREATE TABLE accounts (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    domain      TEXT UNIQUE,
    industry    TEXT,
    size        TEXT CHECK (size IS NULL OR size IN ('1-10', '11-50', '51-200', '201-500', '501-1000', '1000+')),
    country     TEXT,
    status      TEXT NOT NULL DEFAULT 'prospect'
                CHECK (status IN ('prospect', 'customer', 'partner', 'churned')),
    owner       TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX accounts_by_name ON accounts (name, id);

CREATE TABLE contacts (
    id          INTEGER PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES accounts (id),
    first_name  TEXT NOT NULL,
    last_name   TEXT NOT NULL,
    email       TEXT NOT NULL UNIQUE,
    title       TEXT,
    phone       TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX contacts_by_account ON contacts (account_id);

CREATE TABLE activities (
    id           INTEGER PRIMARY KEY,
    account_id   INTEGER NOT NULL REFERENCES accounts (id),
    contact_id   INTEGER REFERENCES contacts (id),
    kind         TEXT NOT NULL CHECK (kind IN ('email', 'call', 'meeting', 'note', 'linkedin')),
    subject      TEXT NOT NULL,
    body         TEXT NOT NULL DEFAULT '',
    occurred_at  TEXT NOT NULL,
    logged_by    TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX activities_by_account ON activities (account_id, occurred_at);
CREATE INDEX activities_by_time ON activities (occurred_at);

CREATE TABLE opportunities (
    id          INTEGER PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES accounts (id),
    name        TEXT NOT NULL,
    stage       TEXT NOT NULL
                CHECK (stage IN ('prospecting', 'qualification', 'proposal', 'negotiation', 'won', 'lost')),
    amount      REAL NOT NULL CHECK (amount >= 0),
    close_date  TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX opportunities_by_account ON opportunities (account_id);

CREATE VIRTUAL TABLE accounts_search USING fts5 (
    name, domain, industry,
    content = 'accounts', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER accounts_search_insert AFTER INSERT ON accounts BEGIN
    INSERT INTO accounts_search (rowid, name, domain, industry)
    VALUES (new.id, new.name, new.domain, new.industry);
END;
CREATE TRIGGER accounts_search_delete AFTER DELETE ON accounts BEGIN
    INSERT INTO accounts_search (accounts_search, rowid, name, domain, industry)
    VALUES ('delete', old.id, old.name, old.domain, old.industry);
END;
CREATE TRIGGER accounts_search_update AFTER UPDATE OF name, domain, industry ON accounts BEGIN
    INSERT INTO accounts_search (accounts_search, rowid, name, domain, industry)
    VALUES ('delete', old.id, old.name, old.domain, old.industry);
    INSERT INTO accounts_search (rowid, name, domain, industry)
    VALUES (new.id, new.name, new.domain, new.industry);
END;

CREATE VIRTUAL TABLE contacts_search USING fts5 (
    first_name, last_name, email, title,
    content = 'contacts', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER contacts_search_insert AFTER INSERT ON contacts BEGIN
    INSERT INTO contacts_search (rowid, first_name, last_name, email, title)
    VALUES (new.id, new.first_name, new.last_name, new.email, new.title);
END;
CREATE TRIGGER contacts_search_delete AFTER DELETE ON contacts BEGIN
    INSERT INTO contacts_search (contacts_search, rowid, first_name, last_name, email, title)
    VALUES ('delete', old.id, old.first_name, old.last_name, old.email, old.title);
END;
CREATE TRIGGER contacts_search_update AFTER UPDATE OF first_name, last_name, email, title ON contacts BEGIN
    INSERT INTO contacts_search (contacts_search, rowid, first_name, last_name, email, title)
    VALUES ('delete', old.id, old.first_name, old.last_name, old.email, old.title);
    INSERT INTO contacts_search (rowid, first_name, last_name, email, title)
    VALUES (new.id, new.first_name, new.last_name, new.email, new.title);
END;

PRAGMA user_version = 1;
COMMIT;
"""

MIGRATIONS: tuple[str, ...] = (_VERSION_1,)
"""``MIGRATIONS[n - 1]`` upgrades a database from version ``n - 1`` to version ``n``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this elynav_nb writes and reads."""
