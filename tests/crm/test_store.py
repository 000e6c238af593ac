"""SQLite store: schema, writes, search, pagination, typed errors, busy and newer-schema databases."""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
import time
from pathlib import Path

import pytest

from elynav_nb.crm.domain import RowBatch
from elynav_nb.crm.schema import SCHEMA_VERSION
from elynav_nb.crm.store import CrmStore, connect_read_only
from elynav_nb.errors import DatabaseBusy, Duplicate, InvalidInput, NotFound, StoreCorrupt


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_new_database_has_wal_foreign_keys_and_schema_version(store: CrmStore) -> None:
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with store._database.reading() as connection:
        assert connection.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_reopening_does_not_migrate_twice(tmp_path: Path) -> None:
    path = tmp_path / "crm.sqlite"
    with CrmStore.open(path) as first:
        first.create_account("Acme")
    with CrmStore.open(path) as second:
        assert second.table_counts()["accounts"] == 1


def test_create_and_get_account_with_children(store: CrmStore) -> None:
    account = store.create_account("Durand Logistique SAS", domain_name="durand-logistique.fr", country="fr")
    contact = store.create_contact(account.id, "Claire", "Martin", "claire.martin@durand-logistique.fr")
    store.log_activity(account.id, "call", "Appel de découverte", "elynav-sdr", contact_id=contact.id)
    store.create_opportunity(account.id, "Licence annuelle", 12000, stage="proposal", close_date="2025-09-30")
    detail = store.get_account(account.id)
    assert detail.account.country == "FR"
    assert detail.account.created_at == "2025-07-01T09:00:00Z"
    assert [item.email for item in detail.contacts] == ["claire.martin@durand-logistique.fr"]
    assert [item.kind for item in detail.recent_activities] == ["call"]
    assert [(item.stage, item.amount) for item in detail.opportunities] == [("proposal", 12000.0)]


def test_duplicate_email_round_trip(store: CrmStore) -> None:
    account = store.create_account("Acme")
    first = store.create_contact(account.id, "Jean", "Dupont", "jean.dupont@acme.fr")
    with pytest.raises(Duplicate) as caught:
        store.create_contact(account.id, "Jean", "Dupont", "JEAN.DUPONT@acme.fr")
    assert caught.value.code == "DUPLICATE"
    assert caught.value.details["existing_id"] == first.id
    assert f"id {first.id}" in str(caught.value)
    assert store.table_counts()["contacts"] == 1


def test_duplicate_account_domain_names_the_existing_account(store: CrmStore) -> None:
    first = store.create_account("Acme", domain_name="acme.fr")
    with pytest.raises(Duplicate) as caught:
        store.create_account("Acme bis", domain_name="ACME.fr")
    assert caught.value.details["existing_id"] == first.id
    other = store.create_account("Other", domain_name="other.fr")
    with pytest.raises(Duplicate):
        store.update_account(other.id, {"domain": "acme.fr"})


def test_unknown_ids_are_not_found(store: CrmStore) -> None:
    with pytest.raises(NotFound, match="account 999 does not exist"):
        store.get_account(999)
    with pytest.raises(NotFound):
        store.create_contact(999, "A", "B", "a.b@exemple.fr")
    with pytest.raises(NotFound):
        store.log_activity(999, "note", "x", "Yann")
    with pytest.raises(NotFound, match="opportunity 5"):
        store.update_opportunity_stage(5, "won")
    assert store.table_counts() == {"accounts": 0, "contacts": 0, "activities": 0, "opportunities": 0}


def test_bad_inputs_write_nothing(store: CrmStore) -> None:
    account = store.create_account("Acme")
    with pytest.raises(InvalidInput, match="has no '@'"):
        store.create_contact(account.id, "A", "B", "no-at-sign")
    with pytest.raises(InvalidInput, match="negative"):
        store.create_opportunity(account.id, "Deal", -10)
    with pytest.raises(InvalidInput, match="stage 'signed' is unknown"):
        store.create_opportunity(account.id, "Deal", 10, stage="signed")
    with pytest.raises(InvalidInput, match="limit is 65,536 bytes"):
        store.log_activity(account.id, "email", "Long", "elynav-sdr", body="x" * (1024 * 1024))
    counts = store.table_counts()
    assert (counts["contacts"], counts["activities"], counts["opportunities"]) == (0, 0, 0)


def test_contact_of_another_account_is_refused(store: CrmStore) -> None:
    first = store.create_account("First")
    second = store.create_account("Second")
    contact = store.create_contact(first.id, "A", "B", "a.b@first.fr")
    with pytest.raises(InvalidInput, match=f"belongs to account {first.id}"):
        store.log_activity(second.id, "call", "x", "Yann", contact_id=contact.id)


def test_update_account_changes_only_given_fields(store: CrmStore) -> None:
    account = store.create_account("Acme", industry="Logistique", owner="Yann")
    updated = store.update_account(account.id, {"status": "customer", "owner": None})
    assert (updated.status, updated.owner, updated.industry) == ("customer", None, "Logistique")
    with pytest.raises(InvalidInput, match="cannot update id"):
        store.update_account(account.id, {"id": 5})
    with pytest.raises(InvalidInput, match="nothing to update"):
        store.update_account(account.id, {})


def test_search_finds_prefixes_and_ignores_accents(store: CrmStore) -> None:
    store.create_account("Société Générale de Transports", industry="Transport")
    store.create_account("Acme Lyon", domain_name="acme-lyon.fr")
    assert [item.name for item in store.search_accounts("societe gener").items] == [
        "Société Générale de Transports"
    ]
    assert [item.name for item in store.search_accounts("acme-lyon.fr").items] == ["Acme Lyon"]


def test_search_pages_follow_rank_then_id(store: CrmStore) -> None:
    for number in range(12):
        store.create_account(f"Atelier {number:02d}", industry="Menuiserie")
    store.create_account("Atelier Atelier", industry="Atelier")  # the word three times: best match
    store.create_account("Atelier de menuiserie fine et de restauration de meubles anciens")
    store.create_account("Boulangerie Martin")
    with store._database.reading() as connection:
        expected = [
            row[0]
            for row in connection.execute(
                "SELECT rowid FROM accounts_search WHERE accounts_search MATCH '\"atelier\"*' ORDER BY rank, rowid"
            )
        ]
    found: list[int] = []
    cursor: str | None = None
    while True:
        page = store.search_accounts("atelier", limit=5, cursor=cursor)
        found.extend(item.id for item in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert found == expected and len(found) == 14
    assert found[0] == 13  # "Atelier Atelier" first; the long name last
    assert found[-1] == 14


def test_contact_search_ranks_and_filters_by_account(store: CrmStore) -> None:
    first = store.create_account("Acme")
    second = store.create_account("Globex")
    store.create_contact(first.id, "Claire", "Martin", "claire@acme.fr", title="Directrice")
    store.create_contact(second.id, "Martin", "Martin", "martin@globex.fr", title="Directeur Martin")
    store.create_contact(second.id, "Paul", "Martin", "paul@globex.fr")
    store.create_contact(second.id, "Jean", "Dupont", "jean@globex.fr")
    everyone = [item.email for item in store.search_contacts("martin").items]
    assert everyone[0] == "martin@globex.fr"  # the word three times: best match
    assert sorted(everyone) == ["claire@acme.fr", "martin@globex.fr", "paul@globex.fr"]
    of_second = [item.email for item in store.search_contacts("martin", account_id=second.id).items]
    assert of_second == [email for email in everyone if email.endswith("@globex.fr")]
    assert [item.email for item in store.search_contacts("", account_id=first.id).items] == ["claire@acme.fr"]
    first_page = store.search_contacts("martin", limit=2)
    second_page = store.search_contacts("martin", limit=2, cursor=first_page.next_cursor)
    assert [item.email for item in first_page.items + second_page.items] == everyone
    assert second_page.next_cursor is None


@pytest.mark.parametrize(
    "hostile_query",
    [
        "'; DROP TABLE accounts; --",
        "acme' OR '1'='1",
        '" OR 1=1 --',
        "acme OR lyon",
        "NEAR(acme lyon)",
        "name:acme",
        "acme*",
        "^acme",
        "(acme",
        '"unterminated',
        "-acme",
        "\x00acme",
    ],
)
def test_hostile_search_text_is_safe(store: CrmStore, hostile_query: str) -> None:
    store.create_account("Acme Lyon")
    store.create_account("Autre Société")
    page = store.search_accounts(hostile_query)
    names = [item.name for item in page.items]
    assert names in ([], ["Acme Lyon"])  # a plain word search, never an error nor everything
    contacts = store.search_contacts(hostile_query)
    assert contacts.items == []
    assert store.table_counts()["accounts"] == 2  # nothing dropped


def test_pagination_walks_every_row_once(store: CrmStore) -> None:
    for number in range(23):
        store.create_account(f"Groupe {number:02d}")
    seen: list[int] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = store.search_accounts("groupe", limit=10, cursor=cursor)
        seen.extend(item.id for item in page.items)
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == 3
    assert sorted(seen) == list(range(1, 24))
    empty_query_page = store.search_accounts("", limit=5)
    assert len(empty_query_page.items) == 5 and empty_query_page.next_cursor is not None


def test_list_activities_filters_and_order(store: CrmStore) -> None:
    account = store.create_account("Acme")
    store.log_activity(account.id, "call", "old", "elynav-sdr", occurred_at="2025-01-01T10:00:00Z")
    store.log_activity(account.id, "email", "new", "Yann", occurred_at="2025-06-01T10:00:00Z")
    store.log_activity(account.id, "call", "mid", "elynav-sdr", occurred_at="2025-03-01T10:00:00Z")
    assert [item.subject for item in store.list_activities().items] == ["new", "mid", "old"]
    assert [item.subject for item in store.list_activities(kind="call").items] == ["mid", "old"]
    assert [item.subject for item in store.list_activities(logged_by="Yann").items] == ["new"]
    assert [item.subject for item in store.list_activities(since="2025-02-01").items] == ["new", "mid"]
    page = store.list_activities(limit=2)
    assert page.next_cursor is not None
    assert [item.subject for item in store.list_activities(limit=2, cursor=page.next_cursor).items] == ["old"]


def test_pipeline_summary_lists_every_stage(store: CrmStore) -> None:
    account = store.create_account("Acme")
    store.create_opportunity(account.id, "A", 100, stage="proposal")
    store.create_opportunity(account.id, "B", 50.5, stage="won")
    opportunity = store.create_opportunity(account.id, "C", 10)
    store.update_opportunity_stage(opportunity.id, "lost")
    summary = store.pipeline_summary()
    assert [(item.stage, item.count) for item in summary.stages] == [
        ("prospecting", 0),
        ("qualification", 0),
        ("proposal", 1),
        ("negotiation", 0),
        ("won", 1),
        ("lost", 1),
    ]
    assert (summary.open_count, summary.open_amount, summary.won_amount) == (1, 100.0, 50.5)


def test_bulk_insert_is_all_or_nothing(store: CrmStore) -> None:
    now = "2025-01-01T00:00:00Z"
    good = RowBatch(accounts=[(1, "A", None, None, None, "FR", "prospect", None, now, now)])
    bad = RowBatch(
        accounts=[(2, "B", None, None, None, "FR", "prospect", None, now, now)],
        contacts=[(1, 999, "X", "Y", "x.y@b.fr", None, None, now, now)],  # account 999: foreign key fails
    )
    with pytest.raises(Exception) as caught:
        store.insert_batches([good, bad])
    assert getattr(caught.value, "code", None) == "SERVICE_ERROR"
    assert store.table_counts()["accounts"] == 0


def test_locked_database_gives_database_busy_after_the_timeout(tmp_path: Path) -> None:
    path = tmp_path / "crm.sqlite"
    with CrmStore.open(path, busy_timeout_seconds=0.2) as crm_store:
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            started = time.monotonic()
            with pytest.raises(DatabaseBusy) as caught:
                crm_store.create_account("Acme")
            waited = time.monotonic() - started
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert caught.value.code == "DATABASE_BUSY"
        assert "0.2 s" in str(caught.value)
        assert waited >= 0.15  # it did wait for the busy timeout
        assert waited < 30  # guard only
        assert crm_store.create_account("Acme").id == 1  # usable again once the lock is gone


def test_newer_schema_is_refused_and_the_file_is_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT, galaxy TEXT)")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    digest_before = _file_digest(path)
    with pytest.raises(StoreCorrupt) as caught:
        CrmStore.open(path)
    assert caught.value.code == "STORE_CORRUPT"
    assert "newer" in str(caught.value)
    assert caught.value.details["schema_version"] == SCHEMA_VERSION + 1
    with pytest.raises(StoreCorrupt):
        connect_read_only(path)
    assert _file_digest(path) == digest_before
    assert not Path(f"{path}-wal").exists()
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    connection.close()


def test_foreign_sqlite_file_and_garbage_file_are_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER)")
    connection.close()
    with pytest.raises(StoreCorrupt, match="not an elynav CRM"):
        CrmStore.open(foreign)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database at all" * 100)
    digest_before = _file_digest(garbage)
    with pytest.raises(StoreCorrupt, match="not a SQLite database"):
        CrmStore.open(garbage)
    assert _file_digest(garbage) == digest_before


def test_read_only_connection_cannot_write(store: CrmStore) -> None:
    store.create_account("Acme")
    connection = connect_read_only(store.path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            connection.execute("DELETE FROM accounts")
    finally:
        connection.close()
    assert store.table_counts()["accounts"] == 1


hypothesis = pytest.importorskip("hypothesis")
strategies = pytest.importorskip("hypothesis.strategies")


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(query=strategies.text(max_size=80))
def test_any_search_text_gives_a_result_or_invalid_input(query: str) -> None:
    with tempfile.TemporaryDirectory() as folder, CrmStore.open(Path(folder) / "crm.sqlite") as crm_store:
        crm_store.create_account("Acme Lyon")
        try:
            page = crm_store.search_accounts(query)
        except InvalidInput:
            return  # too many words: a coded refusal, never an FTS5 or SQL error
        assert [item.name for item in page.items] in ([], ["Acme Lyon"])
        contacts = crm_store.search_contacts(query)
        assert contacts.items == []
