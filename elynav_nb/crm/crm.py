"""``Crm``: the notebook face of the CRM: read-only DataFrames, MCP calls, ready-made analyses.

Where it sits: the object a user holds (``crm = Crm.open("crm.sqlite")``). Heavy reads go straight
to SQLite, read-only (``reader.py``); ``await crm.call("search_accounts", query="acme")`` goes
through the real MCP server over stdio, the same surface the agents use (``session.py`` keeps one
server process and session open across cells; ``await crm.aclose()`` stops it), and comes back
as a DataFrame (``frames.py``) with the CRM dtypes (``columns.py``). Analyses are in
``analysis.py``; ``Crm`` passes them its frames.

Frames are Arrow-backed (``int64[pyarrow]``, ``string[pyarrow]``, ``timestamp[us, tz=UTC][pyarrow]``;
categories stay ``category``); ``dtype_backend="numpy_nullable"`` on the read methods, or
``columns.with_numpy_dtypes(frame)`` on any frame, gives NumPy-backed dtypes instead.

Three faces: a one-line ``repr``, ``_repr_html_`` (rows per table) and ``to_frame()`` (accounts;
``to_frame("contacts")`` for another table).

Opening a path that holds no database: ``Crm.open(path)`` refuses it (``NOT_FOUND``), as
``pandas.read_csv`` or ``read_parquet`` refuse a missing file, so a mistyped path fails at once
instead of showing an empty CRM; ``Crm.open(path, create=True)`` creates an empty CRM there (and
migrates an older one), which is what ``elynav mcp crm --db PATH`` always does for its agents.
``elynav crm demo --db PATH`` creates one filled with demo data.
"""

from __future__ import annotations

import dataclasses
import html
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pandas as pd
from mcp import StdioServerParameters
from mcp.types import CallToolResult

from elynav_nb.crm import analysis
from elynav_nb.crm.columns import DtypeBackend, apply_crm_dtypes
from elynav_nb.crm.database import connect_read_only
from elynav_nb.crm.domain import Account, Activity, Contact, Opportunity, StageTotal
from elynav_nb.crm.frames import mcp_result_to_frame
from elynav_nb.crm.reader import read_table, read_table_counts
from elynav_nb.crm.server import TOOL_NAMES
from elynav_nb.crm.session import McpStdioSession
from elynav_nb.crm.store import CrmStore
from elynav_nb.errors import ElynavError, InvalidInput

__all__ = ["Crm"]

# The record behind each tool's rows: gives an empty result its columns.
_TOOL_RECORDS: dict[str, type[Any]] = {
    "search_accounts": Account,
    "create_account": Account,
    "update_account": Account,
    "search_contacts": Contact,
    "create_contact": Contact,
    "log_activity": Activity,
    "list_activities": Activity,
    "create_opportunity": Opportunity,
    "update_opportunity_stage": Opportunity,
    "pipeline_summary": StageTotal,
}


class Crm:
    """A CRM database seen from a notebook. Open with ``Crm.open(path)``; close with ``await crm.aclose()``."""

    def __init__(self, database_path: Path, *, python_executable: str, call_timeout_seconds: float) -> None:
        self.database_path = database_path
        self._session = McpStdioSession(
            StdioServerParameters(
                command=python_executable,
                args=["-m", "elynav_nb.crm.server", "--db", str(database_path)],
            ),
            call_timeout_seconds=call_timeout_seconds,
        )

    @classmethod
    def open(
        cls,
        database_path: str | Path,
        *,
        create: bool = False,
        python_executable: str | None = None,
        call_timeout_seconds: float = 60.0,
    ) -> Crm:
        """Open a CRM database (checked now, read-only); the MCP server starts at the first call.

        A missing file is refused (``NOT_FOUND``, like pandas' readers: a typo never gives an empty
        CRM) unless ``create=True``, which creates an empty CRM there, or migrates an older one, as
        ``elynav mcp crm --db PATH`` does. Its folder must exist either way.
        """
        path = Path(database_path).expanduser().resolve()
        if create:
            CrmStore.open(path).close()  # creates or migrates; a folder or a foreign file stays refused
        connect_read_only(path).close()  # NotFound / StoreCorrupt now rather than later
        return cls(
            path,
            python_executable=python_executable or sys.executable,
            call_timeout_seconds=call_timeout_seconds,
        )

    # --- read-only frames -----------------------------------------------------------------

    def accounts(self, *, dtype_backend: DtypeBackend = "pyarrow") -> pd.DataFrame:
        """Every account, by id. ``dtype_backend="numpy_nullable"``: NumPy-backed dtypes (see ``columns``)."""
        return read_table(self.database_path, "accounts", dtype_backend=dtype_backend)

    def contacts(self, *, dtype_backend: DtypeBackend = "pyarrow") -> pd.DataFrame:
        """Every contact, by id."""
        return read_table(self.database_path, "contacts", dtype_backend=dtype_backend)

    def activities(self, *, dtype_backend: DtypeBackend = "pyarrow") -> pd.DataFrame:
        """Every activity, by id."""
        return read_table(self.database_path, "activities", dtype_backend=dtype_backend)

    def opportunities(self, *, dtype_backend: DtypeBackend = "pyarrow") -> pd.DataFrame:
        """Every opportunity, by id."""
        return read_table(self.database_path, "opportunities", dtype_backend=dtype_backend)

    def to_frame(self, table: str = "accounts", *, dtype_backend: DtypeBackend = "pyarrow") -> pd.DataFrame:
        """One table, by id: the accounts unless ``table`` names another (``"contacts"``, ``"activities"``,
        ``"opportunities"``; anything else is ``INVALID_INPUT`` listing them)."""
        return read_table(self.database_path, table, dtype_backend=dtype_backend)

    def counts(self) -> dict[str, int]:
        """Rows per table."""
        return read_table_counts(self.database_path)

    # --- MCP ------------------------------------------------------------------------------

    async def call_result(
        self, tool: str, arguments: Mapping[str, Any] | None = None, **keyword_arguments: Any
    ) -> CallToolResult:
        """The raw MCP result of one tool call through the stdio server (arguments as in ``call``)."""
        if tool not in TOOL_NAMES:
            raise InvalidInput(f"unknown CRM tool {tool!r}; use one of: {', '.join(TOOL_NAMES)}")
        return await self._session.call_tool(tool, _tool_arguments(tool, arguments, keyword_arguments))

    async def call(
        self, tool: str, arguments: Mapping[str, Any] | None = None, **keyword_arguments: Any
    ) -> pd.DataFrame:
        """Call one CRM tool over MCP; the rows come back as a DataFrame with CRM dtypes.

        The tool's arguments as keywords (``crm.call("search_accounts", query="acme")``), as one
        dict, the shape MCP and the OpenAI-style tools use (``crm.call("search_accounts",
        {"query": "acme"})``), or both (a name given twice is ``INVALID_INPUT``).
        Pages keep ``next_cursor`` in ``frame.attrs``; a tool error raises its typed error
        (``InvalidInput``, ``NotFound``, ``Duplicate`` with ``details["existing_id"]``, ...).
        """
        frame = mcp_result_to_frame(await self.call_result(tool, arguments, **keyword_arguments))
        record = _TOOL_RECORDS.get(tool)
        if frame.empty and not len(frame.columns) and record is not None:
            attributes = dict(frame.attrs)
            empty_columns = {field.name: pd.Series([], dtype="str") for field in dataclasses.fields(record)}
            frame = pd.DataFrame(empty_columns)
            frame.attrs.update(attributes)
        return apply_crm_dtypes(frame)  # keeps attrs

    async def aclose(self) -> None:
        """Stop the MCP server process, if one was started."""
        await self._session.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    # --- analyses -------------------------------------------------------------------------

    def pipeline_by_stage(self) -> pd.DataFrame:
        return analysis.pipeline_by_stage(self.opportunities())

    def activities_per_agent_per_week(self, *, agents_only: bool = False) -> pd.DataFrame:
        return analysis.activities_per_agent_per_week(self.activities(), agents_only=agents_only)

    def untouched_accounts(
        self, days: int = 30, *, as_of: datetime | str | pd.Timestamp | None = None
    ) -> pd.DataFrame:
        return analysis.untouched_accounts(self.accounts(), self.activities(), days=days, as_of=as_of)

    # --- display --------------------------------------------------------------------------

    def __repr__(self) -> str:
        try:
            counts = " ".join(f"{table}={count}" for table, count in self.counts().items())
        except ElynavError as error:  # a repr never raises: the file may be gone
            counts = f"unavailable ({error.code})"
        return f"<Crm {self.database_path.name!r} {counts}>"

    def _repr_html_(self) -> str:
        try:
            counts = self.counts()
        except ElynavError as error:
            return (
                f"<b>CRM</b> <code>{html.escape(self.database_path.name)}</code>: unavailable ({error.code})"
            )
        rows = "".join(
            f"<tr><td>{html.escape(table)}</td><td style='text-align:right'>{count:,}</td></tr>"
            for table, count in counts.items()
        )
        return (
            f"<b>CRM</b> <code>{html.escape(self.database_path.name)}</code>"
            f"<table><thead><tr><th>table</th><th>rows</th></tr></thead><tbody>{rows}</tbody></table>"
        )


def _tool_arguments(
    tool: str, arguments: Mapping[str, Any] | None, keyword_arguments: dict[str, Any]
) -> dict[str, Any]:
    """The dict of arguments and the keywords, merged; ``INVALID_INPUT`` for a non-mapping or a name given twice."""
    if arguments is None:
        return dict(keyword_arguments)
    if not isinstance(arguments, Mapping):
        raise InvalidInput(
            f"the arguments of {tool} must be a dict of argument names to values (or keywords), "
            f"got {type(arguments).__name__}"
        )
    merged = {str(name): value for name, value in arguments.items()}
    twice = sorted(set(merged) & set(keyword_arguments))
    if twice:
        raise InvalidInput(
            f"{tool}: {', '.join(twice)} given both in the dict and as a keyword; give each once"
        )
    merged.update(keyword_arguments)
    return merged
