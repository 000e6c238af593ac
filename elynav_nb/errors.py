"""The one error tree of elynav_nb: every failure a user can meet, each with a stable ``code``.

Where it sits: imported by every capability (agents, office, docs, templates, crm) and by the
MCP servers, which turn an ``ElynavError`` into a ``{code, message}`` tool error. Nothing here
does I/O.

How to read an error: ``error.code`` is a stable string meant for code and for agents
(``AGENT_BUSY``, ``VERSION_CONFLICT``...); ``str(error)`` is one plain sentence for people;
``error.details`` holds extra, secret-free facts (an exit code, a stderr tail). In a notebook
the traceback is replaced by one line ``CODE: message`` (``_render_traceback_``).

Messages never carry secrets: callers pass redacted text, and ``redact_secrets`` is the helper
they use for text that came from outside (stderr tails, server answers).

The tree::

    ElynavError                         ELYNAV_ERROR
    ├── InvalidInput                    INVALID_INPUT
    │   ├── AgentDefinitionInvalid      AGENT_DEFINITION_INVALID
    │   ├── SyncCallInsideLoop          SYNC_CALL_INSIDE_LOOP
    │   ├── NoRunningLoop               NO_RUNNING_LOOP
    │   ├── LoopMismatch                LOOP_MISMATCH
    │   ├── LoopEnded                   LOOP_ENDED
    │   └── UnsupportedBlockType        UNSUPPORTED_BLOCK_TYPE
    ├── NotFound                        NOT_FOUND
    │   ├── AgentNotFound               AGENT_NOT_FOUND
    │   ├── CliNotFound                 CLI_NOT_FOUND
    │   ├── TemplateNotFound            TEMPLATE_NOT_FOUND
    │   ├── AskNotFound                 ASK_NOT_FOUND
    │   ├── OfficeUnreachable           OFFICE_UNREACHABLE
    │   ├── DocNotFound                 DOC_NOT_FOUND
    │   ├── BlockNotFound               BLOCK_NOT_FOUND
    │   ├── NotebookNotFound            NOTEBOOK_NOT_FOUND
    │   └── CellNotFound                CELL_NOT_FOUND
    ├── Duplicate                       DUPLICATE
    ├── NotAllowed                      NOT_ALLOWED
    │   ├── DocReadonly                 DOC_READONLY
    │   ├── DocNotPublic                DOC_NOT_PUBLIC
    │   ├── AuthRequired                AUTH_REQUIRED
    │   ├── PathOutsideWorkspace        PATH_OUTSIDE_WORKSPACE
    │   └── CallerUnknown               CALLER_UNKNOWN
    ├── Conflict                        CONFLICT
    │   ├── VersionConflict             VERSION_CONFLICT
    │   ├── AgentBusy                   AGENT_BUSY
    │   ├── Deadlock                    DEADLOCK
    │   │   └── RunRefused              RUN_REFUSED
    │   ├── OfficeAlreadyRunning        OFFICE_ALREADY_RUNNING
    │   └── InstanceMismatch            INSTANCE_MISMATCH
    ├── StoreCorrupt                    STORE_CORRUPT
    │   └── TemplateStoreCorrupt        TEMPLATE_STORE_CORRUPT
    ├── OperationTimeout                TIMEOUT
    │   ├── AgentTimeout                AGENT_TIMEOUT
    │   ├── SyncTimeout                 SYNC_TIMEOUT
    │   └── DeadlineExceeded            DEADLINE_EXCEEDED
    ├── AgentProcessError               AGENT_PROCESS_ERROR
    │   ├── CliStartFailed              CLI_START_FAILED
    │   │   ├── BypassRefusedAsRoot     BYPASS_REFUSED_AS_ROOT
    │   │   └── SessionNotFound         SESSION_NOT_FOUND
    │   ├── CliExited                   CLI_EXITED
    │   └── RunnerClosed                RUNNER_CLOSED
    ├── ProtocolError                   PROTOCOL_ERROR
    ├── OutputInvalid                   OUTPUT_INVALID
    ├── ToolFailed                      TOOL_FAILED
    ├── LimitReached                    LIMIT_REACHED
    │   ├── BudgetReached               BUDGET_REACHED
    │   └── MaxTurnsReached             MAX_TURNS_REACHED
    └── ServiceError                    SERVICE_ERROR
        ├── DatabaseBusy                DATABASE_BUSY
        ├── RateLimited                 RATE_LIMITED
        ├── ResponseTooLarge            RESPONSE_TOO_LARGE
        ├── RoomReset                   ROOM_RESET
        ├── KernelDied                  KERNEL_DIED
        └── UnsavedChanges              UNSAVED_CHANGES
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "AgentBusy",
    "AgentDefinitionInvalid",
    "AgentNotFound",
    "AgentProcessError",
    "AgentTimeout",
    "AskNotFound",
    "AuthRequired",
    "BlockNotFound",
    "BudgetReached",
    "BypassRefusedAsRoot",
    "CallerUnknown",
    "CellNotFound",
    "CliExited",
    "CliNotFound",
    "CliStartFailed",
    "Conflict",
    "DatabaseBusy",
    "DeadlineExceeded",
    "Deadlock",
    "DocNotFound",
    "DocNotPublic",
    "DocReadonly",
    "Duplicate",
    "ElynavError",
    "InstanceMismatch",
    "InvalidInput",
    "KernelDied",
    "LimitReached",
    "LoopEnded",
    "LoopMismatch",
    "MaxTurnsReached",
    "NoRunningLoop",
    "NotAllowed",
    "NotFound",
    "NotebookNotFound",
    "OfficeAlreadyRunning",
    "OfficeUnreachable",
    "OperationTimeout",
    "OutputInvalid",
    "PathOutsideWorkspace",
    "ProtocolError",
    "RateLimited",
    "ResponseTooLarge",
    "RoomReset",
    "RunRefused",
    "RunnerClosed",
    "ServiceError",
    "SessionNotFound",
    "StoreCorrupt",
    "SyncCallInsideLoop",
    "SyncTimeout",
    "TemplateNotFound",
    "TemplateStoreCorrupt",
    "ToolFailed",
    "UnsavedChanges",
    "UnsupportedBlockType",
    "VersionConflict",
    "error_for_code",
    "redact_secrets",
]


class ElynavError(Exception):
    """Base of every elynav_nb error. ``code`` is stable; the message is for people."""

    code: str = "ELYNAV_ERROR"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (type(self), self.message, self.details))

    def to_dict(self) -> dict[str, Any]:
        """``{"code", "message", **details}``: the shape MCP tools and DataFrames show."""
        return {"code": self.code, "message": self.message, **self.details}

    def _render_traceback_(self) -> list[str]:
        """IPython shows this instead of a deep asyncio traceback."""
        return [f"{self.code}: {self.message}"]


def _rebuild_error(error_class: type[ElynavError], message: str, details: dict[str, Any]) -> ElynavError:
    return error_class(message, details=details)


class InvalidInput(ElynavError):
    """A value given by the caller is wrong; the message says what to fix."""

    code = "INVALID_INPUT"


class AgentDefinitionInvalid(InvalidInput):
    """An agent file's front matter breaks the Claude Code rules (missing name, bad tools...)."""

    code = "AGENT_DEFINITION_INVALID"


class SyncCallInsideLoop(InvalidInput):
    """A blocking ``*_sync`` call was made on the event loop that runs the object: use ``await``."""

    code = "SYNC_CALL_INSIDE_LOOP"


class NoRunningLoop(InvalidInput):
    """A call that starts asyncio work at once (``runner.send``, ``office.submit``) was made where no
    event loop runs (plain Python): ``await`` it in a notebook or async code, or use the ``*_sync``
    method in a script."""

    code = "NO_RUNNING_LOOP"


class LoopMismatch(InvalidInput):
    """The object belongs to another event loop than the one running here (started in another
    thread's loop, or by a ``*_sync`` call on the private loop): use it from its own loop, or only
    through its ``*_sync`` methods."""

    code = "LOOP_MISMATCH"


class LoopEnded(InvalidInput):
    """The event loop the object belongs to has ended (closed, as ``asyncio.run`` does when it
    returns): nothing can run on it any more; make a new object."""

    code = "LOOP_ENDED"


class UnsupportedBlockType(InvalidInput):
    """The BlockNote block type cannot be written (or this block is kept opaque and never rewritten)."""

    code = "UNSUPPORTED_BLOCK_TYPE"


class NotFound(ElynavError):
    """The thing asked for does not exist."""

    code = "NOT_FOUND"


class AgentNotFound(NotFound):
    """The agent name is not defined where the CLI looks for it."""

    code = "AGENT_NOT_FOUND"


class CliNotFound(NotFound):
    """The agent CLI binary is not installed (the message carries an install hint)."""

    code = "CLI_NOT_FOUND"


class TemplateNotFound(NotFound):
    """No agent template has this id."""

    code = "TEMPLATE_NOT_FOUND"


class AskNotFound(NotFound):
    """No ask of the office has this id."""

    code = "ASK_NOT_FOUND"


class OfficeUnreachable(NotFound):
    """No office answers: ``elynav ask`` ran outside an agent of an office, or the office stopped."""

    code = "OFFICE_UNREACHABLE"


class DocNotFound(NotFound):
    """The La Suite Docs document does not exist (or is invisible to these credentials)."""

    code = "DOC_NOT_FOUND"


class BlockNotFound(NotFound):
    """No BlockNote block has this id in the document."""

    code = "BLOCK_NOT_FOUND"


class NotebookNotFound(NotFound):
    """The notebook is not on the Jupyter server at this path (never there, renamed or deleted)."""

    code = "NOTEBOOK_NOT_FOUND"


class CellNotFound(NotFound):
    """No cell of the live notebook has this id (never there, or deleted by someone else)."""

    code = "CELL_NOT_FOUND"


class Duplicate(ElynavError):
    """The thing to create already exists; ``details`` names the existing one."""

    code = "DUPLICATE"


class NotAllowed(ElynavError):
    """The policy or the server refuses this action for this caller. Nothing was changed."""

    code = "NOT_ALLOWED"


class DocReadonly(NotAllowed):
    """The document can be read but not edited with these credentials."""

    code = "DOC_READONLY"


class DocNotPublic(NotAllowed):
    """Anonymous access was asked for a document that is not public."""

    code = "DOC_NOT_PUBLIC"


class AuthRequired(NotAllowed):
    """The server needs credentials that were not given."""

    code = "AUTH_REQUIRED"


class PathOutsideWorkspace(NotAllowed):
    """An agent asked for a file or a working directory outside its workspace (ACP fs and terminal)."""

    code = "PATH_OUTSIDE_WORKSPACE"


class CallerUnknown(NotAllowed):
    """The office could not tell who called its socket (no agent of it, no user token): refused."""

    code = "CALLER_UNKNOWN"


class Conflict(ElynavError):
    """The action collides with the current state; retrying later or re-reading may work."""

    code = "CONFLICT"


class VersionConflict(Conflict):
    """``expected_version`` is stale: someone changed the thing first. Nothing was changed."""

    code = "VERSION_CONFLICT"


class AgentBusy(Conflict):
    """The agent is already in a turn; one turn at a time."""

    code = "AGENT_BUSY"


class Deadlock(Conflict):
    """The ask would close a wait-for cycle (an agent waiting, through others, on itself). Refused."""

    code = "DEADLOCK"


class RunRefused(Deadlock):
    """A notebook cell cannot be run now without waiting for ever (the kernel is busy with the very
    cell that asked, and it has no subshells), or the kernel is not there. Nothing was run."""

    code = "RUN_REFUSED"


class OfficeAlreadyRunning(Conflict):
    """Another office (another kernel or process) already runs on this workspace."""

    code = "OFFICE_ALREADY_RUNNING"


class InstanceMismatch(Conflict):
    """A link points at another Docs instance than the one this session is settled on."""

    code = "INSTANCE_MISMATCH"


class StoreCorrupt(ElynavError):
    """A file on disk is not what its index says; it was left untouched."""

    code = "STORE_CORRUPT"


class TemplateStoreCorrupt(StoreCorrupt):
    """The template index or a template file is corrupt; nothing was overwritten."""

    code = "TEMPLATE_STORE_CORRUPT"


class OperationTimeout(ElynavError):
    """A bounded wait ran out; the message names the step."""

    code = "TIMEOUT"


class AgentTimeout(OperationTimeout):
    """The agent CLI did not answer within its bound."""

    code = "AGENT_TIMEOUT"


class SyncTimeout(OperationTimeout):
    """The collaboration server did not acknowledge in time."""

    code = "SYNC_TIMEOUT"


class DeadlineExceeded(OperationTimeout):
    """A whole call (a Docs REST request with its retries, a Docs session opening) outlived its
    overall deadline, however the server paced its bytes; ``details`` name the deadline and step."""

    code = "DEADLINE_EXCEEDED"


class AgentProcessError(ElynavError):
    """The agent CLI process misbehaved; ``details`` has its exit code and stderr tail."""

    code = "AGENT_PROCESS_ERROR"


class CliStartFailed(AgentProcessError):
    """The agent CLI exited before it was ready."""

    code = "CLI_START_FAILED"


class BypassRefusedAsRoot(CliStartFailed):
    """``bypassPermissions`` is refused by the CLI when running as root (outside a sandbox)."""

    code = "BYPASS_REFUSED_AS_ROOT"


class SessionNotFound(CliStartFailed):
    """The CLI cannot resume the conversation asked for (it has no such session or thread)."""

    code = "SESSION_NOT_FOUND"


class CliExited(AgentProcessError):
    """The agent CLI is gone and could not be brought back."""

    code = "CLI_EXITED"


class RunnerClosed(AgentProcessError):
    """The runner was stopped; start it again or make a new one."""

    code = "RUNNER_CLOSED"


class ProtocolError(ElynavError):
    """A peer sent bytes that break its own protocol."""

    code = "PROTOCOL_ERROR"


class OutputInvalid(ElynavError):
    """An agent's answer does not match the output schema the turn asked for (no JSON, or JSON that
    fails the schema); the turn ends ``failed`` with its raw text kept, never a guessed value."""

    code = "OUTPUT_INVALID"


class ToolFailed(ElynavError):
    """A kernel tool (a Python function offered to an agent) raised, or returned a value with no JSON
    form; the agent gets the exception's type and message only. ``details`` name the exception type."""

    code = "TOOL_FAILED"


class LimitReached(ElynavError):
    """A turn reached a bound its caller set (``max_budget_usd``, ``max_turns``): it ended ``limit``."""

    code = "LIMIT_REACHED"


class BudgetReached(LimitReached):
    """A turn spent its ``max_budget_usd``."""

    code = "BUDGET_REACHED"


class MaxTurnsReached(LimitReached):
    """A turn used its ``max_turns`` model turns."""

    code = "MAX_TURNS_REACHED"


class ServiceError(ElynavError):
    """A server answered with an error we cannot map to a more precise code."""

    code = "SERVICE_ERROR"


class DatabaseBusy(ServiceError):
    """The database stayed locked beyond the busy timeout."""

    code = "DATABASE_BUSY"


class RateLimited(ServiceError):
    """The server throttled us (HTTP 429) beyond the retries allowed; wait and try again."""

    code = "RATE_LIMITED"


class UnsavedChanges(ServiceError):
    """Docs did not save these edits in time (a throttle, a failing server): they are live, or kept
    in a file named in ``details["kept_in"]`` (``DocsSession.save_kept_state`` saves it later)."""

    code = "UNSAVED_CHANGES"


class ResponseTooLarge(ServiceError):
    """A server sent more than the size limit (a REST body, a collaboration message); nothing of it
    was kept. ``details`` name the limit in bytes and the setting that raises it."""

    code = "RESPONSE_TOO_LARGE"


class RoomReset(ServiceError):
    """The collaboration room was reset (server restarted, room dropped) and could not be joined again
    in time; the writes not acknowledged are named in ``details``."""

    code = "ROOM_RESET"


class KernelDied(ServiceError):
    """The notebook's kernel died or restarted while it ran a cell; no output was written twice."""

    code = "KERNEL_DIED"


def _all_error_classes() -> list[type[ElynavError]]:
    found: list[type[ElynavError]] = []
    pending: list[type[ElynavError]] = [ElynavError]
    while pending:
        error_class = pending.pop()
        found.append(error_class)
        pending.extend(error_class.__subclasses__())
    return found


def error_for_code(code: str) -> type[ElynavError]:
    """The error class whose ``code`` is ``code`` (``ElynavError`` when unknown)."""
    for error_class in _all_error_classes():
        if error_class.code == code:
            return error_class
    return ElynavError


_SECRET_PATTERNS = [
    re.compile(r"(?i)\b(sk-[a-z0-9-]{2,}[a-z0-9_\-]{8,})"),
    re.compile(
        r"(?i)((?:api[_-]?key|token|secret|password|sessionid|csrftoken|authorization)\s*[=:]\s*)(\"?)[^\s\";,]+"
    ),
    re.compile(r"(?i)(bearer\s+)[a-z0-9._\-]+"),
]


def redact_secrets(text: str) -> str:
    """Replace things that look like keys, tokens and session cookies with ``[redacted]``."""
    text = _SECRET_PATTERNS[0].sub("[redacted]", text)
    text = _SECRET_PATTERNS[2].sub(r"\1[redacted]", text)
    text = _SECRET_PATTERNS[1].sub(r"\1\2[redacted]", text)
    return text
