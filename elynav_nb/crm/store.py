"""CRM store: every SQLite read and write of the CRM, behind typed errors.

Where it sits: the I/O layer under the MCP server (``server.py``), the demo loader and the
read-only frames (``reader.py``). Callers pass raw values; each method first runs the pure
validators of ``domain.py``, then runs parameterised SQL (user text never enters SQL text, and
search text reaches FTS5 only through ``domain.search_expression``), and returns ``domain``
records.

The database itself (WAL, foreign keys, the busy timeout, migrations, one locked connection) is
``database.Database``: every write here runs in one of its ``BEGIN IMMEDIATE`` transactions, so
multi-row writes are all-or-nothing. ``connect_read_only`` and ``DEFAULT_BUSY_TIMEOUT_SECONDS``
are re-exported from there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from elynav_nb.crm import domain
from elynav_nb.crm.database import DEFAULT_BUSY_TIMEOUT_SECONDS, Database, connect_read_only
from elynav_nb.crm.domain import (
    Account,
    AccountDetail,
    AccountPage,
    Activity,
    ActivityPage,
    Contact,
    ContactPage,
    Opportunity,
    PipelineSummary,
    RowBatch,
    StageTotal,
)
from elynav_nb.crm.schema import SCHEMA_VERSION, TABLES
from elynav_nb.errors import Duplicate, InvalidInput, NotFound

__all__ = ["DEFAULT_BUSY_TIMEOUT_SECONDS", "CrmStore", "connect_read_only"]

_ACCOUNT_COLUMNS = "id, name, domain, industry, size, country, status, owner, created_at, updated_at"
_CONTACT_COLUMNS = "id, account_id, first_name, last_name, email, title, phone, created_at, updated_at"
_ACTIVITY_COLUMNS = "id, account_id, contact_id, kind, subject, body, occurred_at, logged_by, created_at"
_OPPORTUNITY_COLUMNS = "id, account_id, name, stage, amount, close_date, created_at, updated_at"

_UPDATABLE_ACCOUNT_FIELDS = ("name", "domain", "industry", "size", "country", "status", "owner")


def _utc_now() -> datetime:
    return datetime.now(UTC)


class CrmStore:
    """The CRM database. ``CrmStore.open(path)`` creates or migrates it; use as a context manager."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        path: Path,
        *,
        busy_timeout_seconds: float,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._database = Database(connection, path, busy_timeout_seconds)
        self._clock = clock
        self.path = path
        self.busy_timeout_seconds = busy_timeout_seconds

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        busy_timeout_seconds: float = DEFAULT_BUSY_TIMEOUT_SECONDS,
        clock: Callable[[], datetime] = _utc_now,
    ) -> CrmStore:
        """Open (creating it when missing) and migrate the database at ``path``."""
        database = Database.open(path, busy_timeout_seconds=busy_timeout_seconds)
        return cls(database.connection, database.path, busy_timeout_seconds=busy_timeout_seconds, clock=clock)

    def close(self) -> None:
        self._database.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<CrmStore {self.path.name!r} schema_version={SCHEMA_VERSION}>"

    def _now(self) -> str:
        return domain.format_timestamp(self._clock())

    # --- row readers ----------------------------------------------------------------------

    @staticmethod
    def _account(row: tuple[Any, ...]) -> Account:
        return Account(*row)

    @staticmethod
    def _contact(row: tuple[Any, ...]) -> Contact:
        return Contact(*row)

    @staticmethod
    def _activity(row: tuple[Any, ...]) -> Activity:
        return Activity(*row)

    @staticmethod
    def _opportunity(row: tuple[Any, ...]) -> Opportunity:
        return Opportunity(*row)

    def _require_account(self, connection: sqlite3.Connection, account_id: int) -> Account:
        row = connection.execute(
            f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE id = ?", (account_id,)
        ).fetchone()
        if row is None:
            raise NotFound(
                f"account {account_id} does not exist; find account ids with search_accounts",
                details={"account_id": account_id},
            )
        return self._account(row)

    def _require_contact(self, connection: sqlite3.Connection, contact_id: int) -> Contact:
        row = connection.execute(
            f"SELECT {_CONTACT_COLUMNS} FROM contacts WHERE id = ?", (contact_id,)
        ).fetchone()
        if row is None:
            raise NotFound(
                f"contact {contact_id} does not exist; find contact ids with search_contacts",
                details={"contact_id": contact_id},
            )
        return self._contact(row)

    # --- accounts -------------------------------------------------------------------------

    def search_accounts(
        self, query: str = "", *, limit: int = domain.DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> AccountPage:
        """Accounts whose name, domain or industry hold every word of ``query`` (word prefixes, accents ignored).

        An empty query lists every account by name; a query with no letter or digit matches nothing.
        """
        text = domain.validate_search_text(query)
        page_size = domain.validate_limit(limit)
        offset = domain.decode_cursor(cursor)
        if not text:
            sql = f"SELECT {_ACCOUNT_COLUMNS} FROM accounts ORDER BY name, id LIMIT ? OFFSET ?"
            parameters: tuple[object, ...] = (page_size + 1, offset)
        else:
            expression = domain.search_expression(text)
            if expression is None:
                return AccountPage(items=[], next_cursor=None)
            # Rank and page on the FTS index alone, then read the page's rows: sorting (rank, id)
            # pairs rather than whole account rows is 3-4x faster when thousands of accounts match.
            sql = (
                f"SELECT {', '.join('a.' + name.strip() for name in _ACCOUNT_COLUMNS.split(','))} "
                "FROM (SELECT rowid AS hit_id, rank AS hit_rank FROM accounts_search "
                "WHERE accounts_search MATCH ? ORDER BY hit_rank, hit_id LIMIT ? OFFSET ?) AS hit "
                "JOIN accounts AS a ON a.id = hit.hit_id ORDER BY hit.hit_rank, hit.hit_id"
            )
            parameters = (expression, page_size + 1, offset)
        with self._database.reading() as connection:
            rows = connection.execute(sql, parameters).fetchall()
        items = [self._account(row) for row in rows[:page_size]]
        next_cursor = domain.encode_cursor(offset + page_size) if len(rows) > page_size else None
        return AccountPage(items=items, next_cursor=next_cursor)

    def get_account(self, account_id: int) -> AccountDetail:
        """The account with up to 50 contacts, 50 opportunities and its 10 latest activities."""
        identifier = domain.validate_id("account_id", account_id)
        with self._database.reading() as connection:
            account = self._require_account(connection, identifier)
            contacts = connection.execute(
                f"SELECT {_CONTACT_COLUMNS} FROM contacts WHERE account_id = ? ORDER BY last_name, first_name, id "
                "LIMIT 50",
                (identifier,),
            ).fetchall()
            opportunities = connection.execute(
                f"SELECT {_OPPORTUNITY_COLUMNS} FROM opportunities WHERE account_id = ? ORDER BY id LIMIT 50",
                (identifier,),
            ).fetchall()
            activities = connection.execute(
                f"SELECT {_ACTIVITY_COLUMNS} FROM activities WHERE account_id = ? "
                "ORDER BY occurred_at DESC, id DESC LIMIT 10",
                (identifier,),
            ).fetchall()
        return AccountDetail(
            account=account,
            contacts=[self._contact(row) for row in contacts],
            opportunities=[self._opportunity(row) for row in opportunities],
            recent_activities=[self._activity(row) for row in activities],
        )

    def _existing_account_with_domain(self, connection: sqlite3.Connection, domain_name: str) -> int | None:
        row = connection.execute("SELECT id FROM accounts WHERE domain = ?", (domain_name,)).fetchone()
        return None if row is None else int(row[0])

    def create_account(
        self,
        name: str,
        *,
        domain_name: str | None = None,
        industry: str | None = None,
        size: str | None = None,
        country: str | None = None,
        status: str = "prospect",
        owner: str | None = None,
    ) -> Account:
        """A new account. Its domain, when given, must not belong to another account (``DUPLICATE``)."""
        clean_name = domain.validate_required_text("name", name)
        clean_domain = domain.validate_domain(domain_name)
        clean_industry = domain.validate_optional_text("industry", industry)
        clean_size = domain.validate_account_size(size)
        clean_country = domain.validate_country(country)
        clean_status = domain.validate_account_status(status)
        clean_owner = domain.validate_optional_text("owner", owner)
        now = self._now()
        with self._database.writing() as connection:
            if clean_domain is not None:
                existing_id = self._existing_account_with_domain(connection, clean_domain)
                if existing_id is not None:
                    raise Duplicate(
                        f"account {existing_id} already has the domain {clean_domain}; "
                        f"use account {existing_id} (get_account) or update it",
                        details={"existing_id": existing_id},
                    )
            cursor = connection.execute(
                "INSERT INTO accounts (name, domain, industry, size, country, status, owner, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    clean_name,
                    clean_domain,
                    clean_industry,
                    clean_size,
                    clean_country,
                    clean_status,
                    clean_owner,
                    now,
                    now,
                ),
            )
            return self._require_account(connection, int(cursor.lastrowid or 0))

    def update_account(self, account_id: int, changes: dict[str, object]) -> Account:
        """Change some fields of an account (``name``, ``domain``, ``industry``, ``size``, ``country``, ``status``, ``owner``).

        A value of ``None`` clears an optional field; ``name`` and ``status`` cannot be cleared.
        """
        identifier = domain.validate_id("account_id", account_id)
        unknown = sorted(set(changes) - set(_UPDATABLE_ACCOUNT_FIELDS))
        if unknown:
            raise InvalidInput(
                f"cannot update {', '.join(unknown)}; updatable fields: {', '.join(_UPDATABLE_ACCOUNT_FIELDS)}"
            )
        if not changes:
            raise InvalidInput(
                f"nothing to update; give at least one of: {', '.join(_UPDATABLE_ACCOUNT_FIELDS)}"
            )
        clean: dict[str, object] = {}
        for field_name, value in changes.items():
            if field_name == "name":
                clean[field_name] = domain.validate_required_text("name", value)
            elif field_name == "domain":
                clean[field_name] = domain.validate_domain(value)
            elif field_name == "size":
                clean[field_name] = domain.validate_account_size(value)
            elif field_name == "country":
                clean[field_name] = domain.validate_country(value)
            elif field_name == "status":
                clean[field_name] = domain.validate_account_status(value)
            else:
                clean[field_name] = domain.validate_optional_text(field_name, value)
        clean["updated_at"] = self._now()
        with self._database.writing() as connection:
            self._require_account(connection, identifier)
            new_domain = clean.get("domain")
            if isinstance(new_domain, str):
                existing_id = self._existing_account_with_domain(connection, new_domain)
                if existing_id is not None and existing_id != identifier:
                    raise Duplicate(
                        f"account {existing_id} already has the domain {new_domain}; "
                        "give another domain or update that account",
                        details={"existing_id": existing_id},
                    )
            # column names come from the fixed list above, values are parameters
            assignments = ", ".join(f"{field_name} = ?" for field_name in clean)
            connection.execute(
                f"UPDATE accounts SET {assignments} WHERE id = ?", (*clean.values(), identifier)
            )
            return self._require_account(connection, identifier)

    # --- contacts -------------------------------------------------------------------------

    def search_contacts(
        self,
        query: str = "",
        *,
        account_id: int | None = None,
        limit: int = domain.DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> ContactPage:
        """Contacts whose names, e-mail or title hold every word of ``query``, optionally of one account."""
        text = domain.validate_search_text(query)
        page_size = domain.validate_limit(limit)
        offset = domain.decode_cursor(cursor)
        account_filter = None if account_id is None else domain.validate_id("account_id", account_id)
        qualified_columns = ", ".join("c." + name.strip() for name in _CONTACT_COLUMNS.split(","))
        parameters: list[object] = []
        if text:
            expression = domain.search_expression(text)
            if expression is None:
                return ContactPage(items=[], next_cursor=None)
            # As in search_accounts: rank and page on the FTS index, then read the page's rows.
            hits = (
                "SELECT rowid AS hit_id, rank AS hit_rank FROM contacts_search WHERE contacts_search MATCH ?"
            )
            parameters.append(expression)
            if account_filter is not None:
                hits += " AND rowid IN (SELECT id FROM contacts WHERE account_id = ?)"
                parameters.append(account_filter)
            sql = (
                f"SELECT {qualified_columns} FROM ({hits} ORDER BY hit_rank, hit_id LIMIT ? OFFSET ?) AS hit "
                "JOIN contacts AS c ON c.id = hit.hit_id ORDER BY hit.hit_rank, hit.hit_id"
            )
        else:
            sql = f"SELECT {qualified_columns} FROM contacts AS c"
            if account_filter is not None:
                sql += " WHERE c.account_id = ?"
                parameters.append(account_filter)
            sql += " ORDER BY c.last_name, c.first_name, c.id LIMIT ? OFFSET ?"
        parameters.extend([page_size + 1, offset])
        with self._database.reading() as connection:
            if account_filter is not None:
                self._require_account(connection, account_filter)
            rows = connection.execute(sql, parameters).fetchall()
        items = [self._contact(row) for row in rows[:page_size]]
        next_cursor = domain.encode_cursor(offset + page_size) if len(rows) > page_size else None
        return ContactPage(items=items, next_cursor=next_cursor)

    def create_contact(
        self,
        account_id: int,
        first_name: str,
        last_name: str,
        email: str,
        *,
        title: str | None = None,
        phone: str | None = None,
    ) -> Contact:
        """A new contact of an account. An e-mail already in the CRM gives ``DUPLICATE`` with the existing id."""
        identifier = domain.validate_id("account_id", account_id)
        clean_first_name = domain.validate_required_text("first_name", first_name)
        clean_last_name = domain.validate_required_text("last_name", last_name)
        clean_email = domain.validate_email(email)
        clean_title = domain.validate_optional_text("title", title)
        clean_phone = domain.validate_optional_text("phone", phone, 40)
        now = self._now()
        with self._database.writing() as connection:
            self._require_account(connection, identifier)
            row = connection.execute(
                "SELECT id, account_id FROM contacts WHERE email = ?", (clean_email,)
            ).fetchone()
            if row is not None:
                existing_id, existing_account_id = int(row[0]), int(row[1])
                raise Duplicate(
                    f"a contact with email {clean_email} already exists (id {existing_id}, account "
                    f"{existing_account_id}); use contact {existing_id} instead of creating it again",
                    details={"existing_id": existing_id, "account_id": existing_account_id},
                )
            cursor = connection.execute(
                "INSERT INTO contacts (account_id, first_name, last_name, email, title, phone, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    identifier,
                    clean_first_name,
                    clean_last_name,
                    clean_email,
                    clean_title,
                    clean_phone,
                    now,
                    now,
                ),
            )
            return self._require_contact(connection, int(cursor.lastrowid or 0))

    # --- activities -----------------------------------------------------------------------

    def log_activity(
        self,
        account_id: int,
        kind: str,
        subject: str,
        logged_by: str,
        *,
        body: str = "",
        contact_id: int | None = None,
        occurred_at: str | None = None,
    ) -> Activity:
        """Record an e-mail, call, meeting, note or LinkedIn touch on an account (and one of its contacts)."""
        identifier = domain.validate_id("account_id", account_id)
        clean_kind = domain.validate_kind(kind)
        clean_subject = domain.validate_required_text("subject", subject)
        clean_logged_by = domain.validate_required_text("logged_by", logged_by, 100)
        clean_body = domain.validate_body(body)
        contact_identifier = None if contact_id is None else domain.validate_id("contact_id", contact_id)
        now = self._now()
        moment = now if occurred_at is None else domain.validate_timestamp("occurred_at", occurred_at)
        with self._database.writing() as connection:
            self._require_account(connection, identifier)
            if contact_identifier is not None:
                contact = self._require_contact(connection, contact_identifier)
                if contact.account_id != identifier:
                    raise InvalidInput(
                        f"contact {contact_identifier} belongs to account {contact.account_id}, not to account "
                        f"{identifier}; log the activity on account {contact.account_id} or pick another contact"
                    )
            cursor = connection.execute(
                "INSERT INTO activities (account_id, contact_id, kind, subject, body, occurred_at, logged_by, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    identifier,
                    contact_identifier,
                    clean_kind,
                    clean_subject,
                    clean_body,
                    moment,
                    clean_logged_by,
                    now,
                ),
            )
            row = connection.execute(
                f"SELECT {_ACTIVITY_COLUMNS} FROM activities WHERE id = ?", (cursor.lastrowid,)
            ).fetchone()
            return self._activity(row)

    def list_activities(
        self,
        *,
        account_id: int | None = None,
        contact_id: int | None = None,
        kind: str | None = None,
        logged_by: str | None = None,
        since: str | None = None,
        limit: int = domain.DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> ActivityPage:
        """Activities, newest first, filtered by account, contact, kind, author and start time."""
        page_size = domain.validate_limit(limit)
        offset = domain.decode_cursor(cursor)
        conditions: list[str] = []
        parameters: list[object] = []
        account_filter = None if account_id is None else domain.validate_id("account_id", account_id)
        if account_filter is not None:
            conditions.append("account_id = ?")
            parameters.append(account_filter)
        if contact_id is not None:
            conditions.append("contact_id = ?")
            parameters.append(domain.validate_id("contact_id", contact_id))
        if kind is not None:
            conditions.append("kind = ?")
            parameters.append(domain.validate_kind(kind))
        author = domain.validate_optional_text("logged_by", logged_by, 100)
        if author is not None:
            conditions.append("logged_by = ?")
            parameters.append(author)
        if since is not None:
            conditions.append("occurred_at >= ?")
            parameters.append(domain.validate_timestamp("since", since))
        sql = f"SELECT {_ACTIVITY_COLUMNS} FROM activities"
        if conditions:
            sql += " WHERE " + " AND ".join(conditions)
        sql += " ORDER BY occurred_at DESC, id DESC LIMIT ? OFFSET ?"
        parameters.extend([page_size + 1, offset])
        with self._database.reading() as connection:
            if account_filter is not None:
                self._require_account(connection, account_filter)
            rows = connection.execute(sql, parameters).fetchall()
        items = [self._activity(row) for row in rows[:page_size]]
        next_cursor = domain.encode_cursor(offset + page_size) if len(rows) > page_size else None
        return ActivityPage(items=items, next_cursor=next_cursor)

    # --- opportunities --------------------------------------------------------------------

    def create_opportunity(
        self,
        account_id: int,
        name: str,
        amount: float,
        *,
        stage: str = "prospecting",
        close_date: str | None = None,
    ) -> Opportunity:
        """A new opportunity (deal) on an account: amount in euros (0 or more), stage in pipeline order."""
        identifier = domain.validate_id("account_id", account_id)
        clean_name = domain.validate_required_text("name", name)
        clean_amount = domain.validate_amount(amount)
        clean_stage = domain.validate_stage(stage)
        clean_close_date = domain.validate_date("close_date", close_date)
        now = self._now()
        with self._database.writing() as connection:
            self._require_account(connection, identifier)
            cursor = connection.execute(
                "INSERT INTO opportunities (account_id, name, stage, amount, close_date, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (identifier, clean_name, clean_stage, clean_amount, clean_close_date, now, now),
            )
            row = connection.execute(
                f"SELECT {_OPPORTUNITY_COLUMNS} FROM opportunities WHERE id = ?", (cursor.lastrowid,)
            ).fetchone()
            return self._opportunity(row)

    def update_opportunity_stage(self, opportunity_id: int, stage: str) -> Opportunity:
        """Move an opportunity to another stage."""
        identifier = domain.validate_id("opportunity_id", opportunity_id)
        clean_stage = domain.validate_stage(stage)
        now = self._now()
        with self._database.writing() as connection:
            cursor = connection.execute(
                "UPDATE opportunities SET stage = ?, updated_at = ? WHERE id = ?",
                (clean_stage, now, identifier),
            )
            if cursor.rowcount == 0:
                raise NotFound(
                    f"opportunity {identifier} does not exist; get_account lists the opportunities of an account",
                    details={"opportunity_id": identifier},
                )
            row = connection.execute(
                f"SELECT {_OPPORTUNITY_COLUMNS} FROM opportunities WHERE id = ?", (identifier,)
            ).fetchone()
            return self._opportunity(row)

    def pipeline_summary(self) -> PipelineSummary:
        """Count and total amount per stage, and the open and won totals."""
        with self._database.reading() as connection:
            rows = connection.execute(
                "SELECT stage, count(*), coalesce(sum(amount), 0) FROM opportunities GROUP BY stage"
            ).fetchall()
        totals_by_stage = {str(stage): (int(count), float(total)) for stage, count, total in rows}
        stages: list[StageTotal] = []
        open_count = 0
        open_amount = 0.0
        for stage in domain.OPPORTUNITY_STAGES:
            count, total = totals_by_stage.get(stage, (0, 0.0))
            stages.append(StageTotal(stage=stage, count=count, total_amount=round(total, 2)))
            if stage not in domain.CLOSED_STAGES:
                open_count += count
                open_amount += total
        won_amount = totals_by_stage.get("won", (0, 0.0))[1]
        return PipelineSummary(
            stages=stages,
            open_count=open_count,
            open_amount=round(open_amount, 2),
            won_amount=round(won_amount, 2),
        )

    # --- bulk and counts ------------------------------------------------------------------

    def insert_batches(self, batches: Iterable[RowBatch]) -> dict[str, int]:
        """Insert every batch in one transaction (all or nothing); returns the rows added per table.

        Rows carry their ids and timestamps (the demo generator makes them deterministic).
        """
        added = dict.fromkeys(TABLES, 0)
        with self._database.writing() as connection:
            for batch in batches:
                connection.executemany(
                    f"INSERT INTO accounts ({_ACCOUNT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    batch.accounts,
                )
                connection.executemany(
                    f"INSERT INTO contacts ({_CONTACT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    batch.contacts,
                )
                connection.executemany(
                    f"INSERT INTO activities ({_ACTIVITY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    batch.activities,
                )
                connection.executemany(
                    f"INSERT INTO opportunities ({_OPPORTUNITY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    batch.opportunities,
                )
                added["accounts"] += len(batch.accounts)
                added["contacts"] += len(batch.contacts)
                added["activities"] += len(batch.activities)
                added["opportunities"] += len(batch.opportunities)
        return added

    def table_counts(self) -> dict[str, int]:
        """Rows per table."""
        counts: dict[str, int] = {}
        with self._database.reading() as connection:
            for table in TABLES:  # table names from the fixed schema list
                counts[table] = int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        return counts
