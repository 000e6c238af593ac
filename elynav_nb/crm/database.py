"""The CRM's SQLite database: opened, checked and migrated, one locked connection, typed errors.

Where it sits: the I/O plumbing under ``store.CrmStore`` (which holds the CRM's reads and writes)
and ``reader.py`` (``connect_read_only``). It knows the schema only by its version
(``schema.MIGRATIONS``); every ``sqlite3`` error leaves here as a typed error.

How data flows::

    Database.open(path) -> the folder and file checked -> sqlite3.connect (busy timeout)
        -> the schema version read before any write (newer, or not a CRM: STORE_CORRUPT, untouched)
        -> WAL, foreign keys, synchronous NORMAL -> migrations up to SCHEMA_VERSION
    with database.reading() as connection: ...   the lock held; sqlite3 errors typed
    with database.writing() as connection: ...   BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on error;
        a write lock held beyond the busy timeout is DATABASE_BUSY, a damaged file STORE_CORRUPT

One connection, guarded by a lock, serves all threads (the MCP server runs its tools in worker
threads).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from elynav_nb.crm.schema import MIGRATIONS, SCHEMA_VERSION
from elynav_nb.errors import DatabaseBusy, InvalidInput, NotFound, ServiceError, StoreCorrupt

__all__ = ["DEFAULT_BUSY_TIMEOUT_SECONDS", "Database", "connect_read_only"]

DEFAULT_BUSY_TIMEOUT_SECONDS = 5.0


def is_busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def check_schema_version(connection: sqlite3.Connection, path: Path) -> int:
    """The database's schema version; ``StoreCorrupt`` when it is not a CRM this code can read."""
    try:
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        table_count = int(
            connection.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        )
    except sqlite3.OperationalError as error:
        if is_busy(error):
            raise DatabaseBusy(
                f"the CRM database {path} is locked by another process; retry shortly"
            ) from None
        raise StoreCorrupt(f"{path} cannot be read as a SQLite database; it was left untouched") from None
    except sqlite3.DatabaseError:
        raise StoreCorrupt(f"{path} is not a SQLite database; it was left untouched") from None
    if version > SCHEMA_VERSION:
        raise StoreCorrupt(
            f"{path} has CRM schema version {version}, newer than version {SCHEMA_VERSION} that this "
            "elynav_nb knows; upgrade elynav_nb. The file was left untouched (never downgraded)",
            details={"schema_version": version, "supported_version": SCHEMA_VERSION},
        )
    if version == 0 and table_count > 0:
        raise StoreCorrupt(
            f"{path} is a SQLite database but not an elynav CRM ({table_count} foreign tables, "
            "schema version 0); it was left untouched"
        )
    return version


def refuse_a_folder(database_path: Path) -> None:
    """``INVALID_INPUT`` when the path given for the database file is a folder."""
    if database_path.is_dir():
        raise InvalidInput(
            f"the CRM database path {database_path} is a folder, not a database file; give the path of a "
            f"file in it, e.g. {database_path / 'crm.sqlite'}",
            details={"path": str(database_path)},
        )


def connect(target: str | Path, database_path: Path, **options: Any) -> sqlite3.Connection:
    """``sqlite3.connect``, with SQLite's refusal to open the file as a typed error naming the path."""
    try:
        connection: sqlite3.Connection = sqlite3.connect(target, **options)
    except sqlite3.Error as error:
        raise ServiceError(
            f"SQLite cannot open the CRM database {database_path} ({error}); check that it is a file you "
            "may read and write, in a folder you may write to",
            details={"path": str(database_path)},
        ) from None
    return connection


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A read-only connection (``mode=ro``) to an existing CRM database at the current schema version."""
    database_path = Path(path).expanduser().resolve()
    refuse_a_folder(database_path)
    if not database_path.is_file():
        raise NotFound(
            f"no CRM database at {database_path}; create one with demo data (`elynav crm demo --db "
            f"{database_path}`) or an empty one (in Python: Crm.open(path, create=True))",
            details={"path": str(database_path)},
        )
    connection = connect(database_path.as_uri() + "?mode=ro", database_path, uri=True)
    try:
        version = check_schema_version(connection, database_path)
        if version < SCHEMA_VERSION:
            raise StoreCorrupt(
                f"{database_path} has CRM schema version {version}, older than {SCHEMA_VERSION}: open it "
                f"once for writing (`elynav mcp crm --db {database_path}`, or CrmStore.open) to migrate it"
            )
    except BaseException:
        connection.close()
        raise
    return connection


class Database:
    """One CRM database file: its connection, the lock that serialises it, and its error translation."""

    def __init__(self, connection: sqlite3.Connection, path: Path, busy_timeout_seconds: float) -> None:
        self.connection = connection
        self.path = path
        self.busy_timeout_seconds = busy_timeout_seconds
        self._lock = threading.Lock()

    @classmethod
    def open(
        cls, path: str | Path, *, busy_timeout_seconds: float = DEFAULT_BUSY_TIMEOUT_SECONDS
    ) -> Database:
        """Open (creating it when missing) and migrate the database at ``path``."""
        database_path = Path(path).expanduser().resolve()
        refuse_a_folder(database_path)
        if not database_path.parent.is_dir():
            raise NotFound(
                f"the folder {database_path.parent} for the CRM database {database_path} does not exist; "
                f"create it first (mkdir -p {database_path.parent}) or choose a path in an existing folder",
                details={"path": str(database_path)},
            )
        connection = connect(
            database_path,
            database_path,
            timeout=busy_timeout_seconds,
            isolation_level=None,
            check_same_thread=False,
        )
        database = cls(connection, database_path, busy_timeout_seconds)
        try:
            version = check_schema_version(connection, database_path)  # before any write
            database.run_pragma("PRAGMA journal_mode = WAL")
            database.run_pragma("PRAGMA foreign_keys = ON")
            database.run_pragma("PRAGMA synchronous = NORMAL")
            database.migrate(version)
        except BaseException:
            connection.close()
            raise
        return database

    def close(self) -> None:
        with self._lock:
            self.connection.close()

    def busy_error(self) -> DatabaseBusy:
        return DatabaseBusy(
            f"the CRM database stayed locked for {self.busy_timeout_seconds:g} s (another process holds "
            "its write lock); nothing was written, retry in a moment",
            details={"busy_timeout_seconds": self.busy_timeout_seconds},
        )

    def translate(self, error: sqlite3.Error) -> Exception:
        if isinstance(error, sqlite3.OperationalError) and is_busy(error):
            return self.busy_error()
        if isinstance(error, sqlite3.DatabaseError) and "malformed" in str(error).lower():
            return StoreCorrupt(f"the CRM database {self.path} is damaged (SQLite: malformed)")
        return ServiceError(f"the CRM database refused the operation ({type(error).__name__})")

    def run_pragma(self, statement: str) -> None:
        try:
            self.connection.execute(statement)
        except sqlite3.Error as error:
            raise self.translate(error) from None

    def migrate(self, current_version: int) -> None:
        for target_version in range(current_version + 1, SCHEMA_VERSION + 1):
            try:
                self.connection.executescript(MIGRATIONS[target_version - 1])
            except sqlite3.Error as error:
                if self.connection.in_transaction:
                    self.connection.execute("ROLLBACK")
                raise self.translate(error) from None

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self.connection
            except sqlite3.Error as error:
                raise self.translate(error) from None

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: taken with BEGIN IMMEDIATE, committed at the end, rolled back on error."""
        with self._lock:
            try:
                self.connection.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise self.translate(error) from None
            try:
                yield self.connection
                self.connection.execute("COMMIT")
            except BaseException as error:
                if self.connection.in_transaction:
                    self.connection.execute("ROLLBACK")
                if isinstance(error, sqlite3.Error):
                    raise self.translate(error) from None
                raise
