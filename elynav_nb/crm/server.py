"""The CRM MCP server: eleven tools over ``CrmStore``, served over stdio.

Where it sits: the thin edge between an MCP client (the ``claude`` CLI of an Elynav agent, the
notebook's ``Crm.call``, tests) and ``store.py``. Each tool is a plain function whose annotated
signature gives its input schema; it calls one store method and returns a ``domain`` record as
structured output.

How one call flows (``CrmMCPServer.call_tool``, the same for every tool):

    arguments -> tool_arguments.ToolArguments.check (strict JSON types, no unknown argument, integers
      in SQLite's 64-bit range and the declared bounds, no NUL) -> the function, in a worker thread
      -> its record as structured output (the SDK's conversion)
    an ElynavError on the way -> _mcp_errors.typed_error_result: ``is_error``, text
      ``CODE: message {details}``, structured ``{code, message[, details]}``
    anything else (a bug) -> ``Error executing tool <name>``, the traceback in the server log only

So the agent reads a stable code (``INVALID_INPUT``, ``NOT_FOUND``, ``DUPLICATE``, ``DATABASE_BUSY``)
and what to fix. The SDK's own argument coercion (pydantic in lax mode, which takes ``"5"`` or
``true`` for an integer and parses a string that looks like JSON) is never used: the checked
arguments go straight to the function. The store's lock serialises the worker threads on one
SQLite connection.

Run it: ``elynav mcp crm --db PATH`` or ``python -m elynav_nb.crm.server --db PATH`` (both on the
options of ``stdio_options.py``; this module does not import ``command.py``).
"""

from __future__ import annotations

import argparse
import functools
import gc
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, Icon, InputRequiredResult, ToolAnnotations
from pydantic import Field

from elynav_nb._mcp_errors import typed_error_result
from elynav_nb._mcp_stdio import AnsweringStdio
from elynav_nb.crm import domain
from elynav_nb.crm.database import DEFAULT_BUSY_TIMEOUT_SECONDS
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
)
from elynav_nb.crm.stdio_options import check_database_path, configure
from elynav_nb.crm.store import CrmStore
from elynav_nb.crm.tool_arguments import ToolArguments
from elynav_nb.errors import ElynavError, InvalidInput

__all__ = ["SERVER_NAME", "TOOL_NAMES", "CrmMCPServer", "build_crm_server", "main", "serve_stdio"]

SERVER_NAME = "elynav-crm"
TOOL_NAMES: tuple[str, ...] = (
    "search_accounts",
    "get_account",
    "create_account",
    "update_account",
    "search_contacts",
    "create_contact",
    "log_activity",
    "list_activities",
    "create_opportunity",
    "update_opportunity_stage",
    "pipeline_summary",
)

_INSTRUCTIONS = (
    "The Elynav CRM: accounts (French B2B companies), their contacts, the activities logged on them "
    "(email, call, meeting, note, linkedin) and their opportunities. Search before you create: "
    "create_contact refuses an e-mail already known and names the existing contact id. Lists are "
    "paged: pass next_cursor back as cursor. Errors start with a code: INVALID_INPUT (fix the "
    "argument), NOT_FOUND (search for the right id), DUPLICATE (use the existing id), DATABASE_BUSY (retry)."
)

_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_ADD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
_CHANGE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

# Argument types: descriptions and allowed values land in each tool's JSON schema. ``tool_arguments``
# enforces the JSON types and the integer bounds declared here (minimum, maximum) for every tool;
# ``domain`` checks what the values mean (enum, lengths, formats). Either way a wrong value gets a
# coded INVALID_INPUT message, never a pydantic dump.
_POSITIVE = {"minimum": 1}
AccountId = Annotated[
    int, Field(description="Account id (from search_accounts).", json_schema_extra=_POSITIVE)
]
OptionalText = Annotated[str | None, Field(description="Optional text.")]
Limit = Annotated[
    int,
    Field(
        description=f"Page size, 1 to {domain.MAX_PAGE_SIZE}.",
        json_schema_extra={"minimum": 1, "maximum": domain.MAX_PAGE_SIZE},
    ),
]
Cursor = Annotated[
    str | None, Field(description="next_cursor of the previous page; omit for the first page.")
]
Query = Annotated[
    str,
    Field(
        description="Words to find (prefixes, accents ignored, all words required). Empty: list everything.",
        json_schema_extra={"maxLength": domain.MAX_QUERY_CHARS},
    ),
]
Stage = Annotated[
    str,
    Field(description="Pipeline stage.", json_schema_extra={"enum": list(domain.OPPORTUNITY_STAGES)}),
]
Kind = Annotated[
    str, Field(description="Kind of touch.", json_schema_extra={"enum": list(domain.ACTIVITY_KINDS)})
]
Status = Annotated[
    str | None,
    Field(description="Account status.", json_schema_extra={"enum": [*domain.ACCOUNT_STATUSES, None]}),
]
Size = Annotated[
    str | None,
    Field(description="Head-count bracket.", json_schema_extra={"enum": [*domain.ACCOUNT_SIZES, None]}),
]
Country = Annotated[str | None, Field(description="Two-letter ISO 3166 code, e.g. FR.")]
DomainName = Annotated[str | None, Field(description="Web domain without scheme, e.g. exemple.fr.")]


class CrmMCPServer(AnsweringStdio, MCPServer):
    """An ``MCPServer`` whose every tool call goes through one gate (flow in the module docstring)."""

    def __init__(self) -> None:
        super().__init__(SERVER_NAME, version="0.1.0", instructions=_INSTRUCTIONS, log_level="WARNING")
        self._tools: dict[str, Tool] = {}
        self._arguments: dict[str, ToolArguments] = {}

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> None:
        """Register ``fn`` with the SDK (for ``tools/list``) and with the gate (for ``tools/call``).

        ``@server.tool(...)`` comes here too, so a tool added after the build is checked the same way.
        """
        options: dict[str, Any] = {
            "name": name,
            "title": title,
            "description": description,
            "annotations": annotations,
            "icons": icons,
            "meta": meta,
            "structured_output": structured_output,
        }
        tool = Tool.from_function(fn, **options)
        # A schema the gate cannot check fails here, when the server is built, not at the first call.
        arguments = ToolArguments.from_input_schema(tool.name, tool.parameters)
        super().add_tool(fn, **options)
        self._tools[tool.name] = tool
        self._arguments[tool.name] = arguments

    def remove_tool(self, name: str) -> None:
        super().remove_tool(name)
        del self._tools[name], self._arguments[name]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Check the arguments strictly, run the tool in a worker thread, map a typed error."""
        tool = self._tools.get(name)
        try:
            if tool is None:
                raise InvalidInput(
                    f"unknown tool {name!r}; the CRM has: {', '.join(self._tools)}", details={"tool": name}
                )
            checked = self._arguments[name].check(arguments)
            record = await anyio.to_thread.run_sync(functools.partial(tool.fn, **checked))
            return tool.fn_metadata.convert_result(record)
        except ElynavError as error:
            return typed_error_result(error)
        except Exception as error:  # a bug or an OS failure: the SDK logs it, the model sees only the name
            raise UnexpectedToolError(f"Error executing tool {name}") from error


def build_crm_server(store: CrmStore) -> CrmMCPServer:
    """A ``CrmMCPServer`` whose eleven tools read and write ``store``."""
    server = CrmMCPServer()

    @server.tool(title="Search accounts", annotations=_READ)
    def search_accounts(
        query: Query = "", limit: Limit = domain.DEFAULT_PAGE_SIZE, cursor: Cursor = None
    ) -> AccountPage:
        """Find accounts whose name, domain or industry contain every word of `query`; best matches first."""
        return store.search_accounts(query, limit=limit, cursor=cursor)

    @server.tool(title="Get account", annotations=_READ)
    def get_account(account_id: AccountId) -> AccountDetail:
        """One account with its contacts, opportunities and 10 latest activities."""
        return store.get_account(account_id)

    @server.tool(title="Create account", annotations=_ADD)
    def create_account(
        name: Annotated[str, Field(description="Company name.")],
        domain: DomainName = None,
        industry: OptionalText = None,
        size: Size = None,
        country: Country = None,
        status: Status = "prospect",
        owner: Annotated[str | None, Field(description="Agent or person who owns the account.")] = None,
    ) -> Account:
        """Create an account. A domain already used by another account gives DUPLICATE with its id."""
        return store.create_account(
            name,
            domain_name=domain,
            industry=industry,
            size=size,
            country=country,
            status=status or "prospect",
            owner=owner,
        )

    @server.tool(title="Update account", annotations=_CHANGE)
    def update_account(
        account_id: AccountId,
        name: OptionalText = None,
        domain: DomainName = None,
        industry: OptionalText = None,
        size: Size = None,
        country: Country = None,
        status: Status = None,
        owner: OptionalText = None,
    ) -> Account:
        """Change the given fields of an account; fields left out keep their value, "" clears an optional one."""
        given = {
            "name": name,
            "domain": domain,
            "industry": industry,
            "size": size,
            "country": country,
            "status": status,
            "owner": owner,
        }
        changes: dict[str, object] = {}
        for field_name, value in given.items():
            if value is not None:
                changes[field_name] = value
        return store.update_account(account_id, changes)

    @server.tool(title="Search contacts", annotations=_READ)
    def search_contacts(
        query: Query = "",
        account_id: Annotated[
            int | None, Field(description="Only contacts of this account.", json_schema_extra=_POSITIVE)
        ] = None,
        limit: Limit = domain.DEFAULT_PAGE_SIZE,
        cursor: Cursor = None,
    ) -> ContactPage:
        """Find contacts by name, e-mail or job title, optionally within one account."""
        return store.search_contacts(query, account_id=account_id, limit=limit, cursor=cursor)

    @server.tool(title="Create contact", annotations=_ADD)
    def create_contact(
        account_id: AccountId,
        first_name: Annotated[str, Field(description="First name.")],
        last_name: Annotated[str, Field(description="Last name.")],
        email: Annotated[str, Field(description="E-mail address; unique in the CRM.")],
        title: Annotated[str | None, Field(description="Job title.")] = None,
        phone: Annotated[str | None, Field(description="Phone number.")] = None,
    ) -> Contact:
        """Create a contact on an account. An e-mail already in the CRM gives DUPLICATE with the existing id."""
        return store.create_contact(account_id, first_name, last_name, email, title=title, phone=phone)

    @server.tool(title="Log activity", annotations=_ADD)
    def log_activity(
        account_id: AccountId,
        kind: Kind,
        subject: Annotated[str, Field(description="One-line summary.")],
        logged_by: Annotated[str, Field(description="Agent (e.g. elynav-sdr) or person who logs it.")],
        body: Annotated[
            str,
            Field(
                description=f"Full text, up to {domain.MAX_BODY_BYTES:,} bytes of UTF-8.",
                json_schema_extra={"maxLength": domain.MAX_BODY_BYTES},
            ),
        ] = "",
        contact_id: Annotated[
            int | None, Field(description="Contact of this account, if any.", json_schema_extra=_POSITIVE)
        ] = None,
        occurred_at: Annotated[
            str | None, Field(description="ISO 8601 date-time (UTC if no offset); default: now.")
        ] = None,
    ) -> Activity:
        """Record a touch (email, call, meeting, note, linkedin) on an account."""
        return store.log_activity(
            account_id,
            kind,
            subject,
            logged_by,
            body=body,
            contact_id=contact_id,
            occurred_at=occurred_at,
        )

    @server.tool(title="List activities", annotations=_READ)
    def list_activities(
        account_id: Annotated[
            int | None, Field(description="Only this account.", json_schema_extra=_POSITIVE)
        ] = None,
        contact_id: Annotated[
            int | None, Field(description="Only this contact.", json_schema_extra=_POSITIVE)
        ] = None,
        kind: Annotated[
            str | None,
            Field(description="Only this kind.", json_schema_extra={"enum": [*domain.ACTIVITY_KINDS, None]}),
        ] = None,
        logged_by: Annotated[
            str | None, Field(description="Only those logged by this agent or person.")
        ] = None,
        since: Annotated[
            str | None, Field(description="Only those at or after this ISO 8601 date-time.")
        ] = None,
        limit: Limit = domain.DEFAULT_PAGE_SIZE,
        cursor: Cursor = None,
    ) -> ActivityPage:
        """Activities, newest first, with optional filters."""
        return store.list_activities(
            account_id=account_id,
            contact_id=contact_id,
            kind=kind,
            logged_by=logged_by,
            since=since,
            limit=limit,
            cursor=cursor,
        )

    @server.tool(title="Create opportunity", annotations=_ADD)
    def create_opportunity(
        account_id: AccountId,
        name: Annotated[str, Field(description="Deal name.")],
        amount: Annotated[
            float, Field(description="Expected value in euros, 0 or more.", json_schema_extra={"minimum": 0})
        ],
        stage: Stage = "prospecting",
        close_date: Annotated[str | None, Field(description="Expected close date, YYYY-MM-DD.")] = None,
    ) -> Opportunity:
        """Create an opportunity (a deal) on an account."""
        return store.create_opportunity(account_id, name, amount, stage=stage, close_date=close_date)

    @server.tool(title="Update opportunity stage", annotations=_CHANGE)
    def update_opportunity_stage(
        opportunity_id: Annotated[
            int, Field(description="Opportunity id (see get_account).", json_schema_extra=_POSITIVE)
        ],
        stage: Stage,
    ) -> Opportunity:
        """Move an opportunity to another pipeline stage."""
        return store.update_opportunity_stage(opportunity_id, stage)

    @server.tool(title="Pipeline summary", annotations=_READ)
    def pipeline_summary() -> PipelineSummary:
        """Number and total amount of opportunities per stage, plus open and won totals."""
        return store.pipeline_summary()

    return server


def _freeze_startup_objects() -> None:
    """Hide the objects of the imports and of the server's build from the garbage collector.

    About 86,000 of them (the mcp SDK, pydantic schemas): without this, each full collection
    scans them all and stalls the tool call it lands on by 50-160 ms (measured on the benchmark's
    server; ``benchmarks/README.md``, CRM). They live as long as the process anyway.
    """
    gc.collect()
    gc.freeze()


def serve_stdio(database_path: str, *, busy_timeout_seconds: float = DEFAULT_BUSY_TIMEOUT_SECONDS) -> None:
    """Open (create or migrate) the database and serve the CRM over stdio until stdin closes."""
    with CrmStore.open(database_path, busy_timeout_seconds=busy_timeout_seconds) as store:
        server = build_crm_server(store)
        _freeze_startup_objects()
        server.run()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m elynav_nb.crm.server --db PATH``: serve over stdio; typed errors go to stderr."""
    parser = argparse.ArgumentParser(
        prog="python -m elynav_nb.crm.server", description="Serve the CRM over MCP (stdio)."
    )
    configure(parser)  # the same options as `elynav mcp crm`
    arguments = parser.parse_args(argv)
    try:
        database = check_database_path(arguments.db)  # the same checks and messages as `elynav mcp crm`
        serve_stdio(str(database), busy_timeout_seconds=arguments.busy_timeout)
    except ElynavError as error:
        print(f"{error.code}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
