"""``@agent_tool`` and ``KernelTool``: a Python function of the kernel offered to an agent as a tool.

Where it sits: the user decorates a function in a notebook (or ``df_tools`` builds some); a
``KernelToolSet`` groups them; the transport that comes later (not in this package) will publish
``name`` / ``description`` / ``parameters`` to the agent CLI and answer its tool calls with
``await tool.call(arguments)``. This module does no I/O of its own: it runs the user's function.

How a call flows::

    arguments (a JSON object from the model)
      -> ArgumentSpec.validate: strict, per argument      (wrong -> INVALID_INPUT tool error)
      -> the function: an ``async def`` as a task on the running loop, a plain ``def`` on a daemon
         thread of its own (``tool_threads``: reused once idle; the loop stays free), both bounded
         by ``timeout``  (over -> TIMEOUT)
         (raised -> TOOL_FAILED or the ElynavError's code: type and message only, redacted)
      -> to_json_value -> bound_json(max_result_bytes)      (no JSON form -> TOOL_FAILED)
         (for a plain function still on its thread, so a big result does not hold the loop)
      -> ToolOutcome(is_error, content, structured)

A call never raises for what the tool did (only ``asyncio.CancelledError`` when the caller is
cancelled). A timed-out ``async`` tool is cancelled; a timed-out plain function cannot be stopped by
Python: its thread runs on in the background (a daemon, it does not keep the kernel from exiting) and
its late result is dropped. Plain functions therefore run off the loop thread: a tool that touches
widgets or other loop-bound objects should be ``async``.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import html
import inspect
import math
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, overload

from elynav_nb.agents.tools.arguments import ArgumentSpec, build_argument_spec, underlying_function
from elynav_nb.agents.tools.docstrings import read_docstring
from elynav_nb.agents.tools.json_values import NotJsonValue, bound_json, to_json_value
from elynav_nb.agents.tools.outcome import ToolOutcome, error_outcome, exception_outcome
from elynav_nb.agents.tools.tool_threads import tool_threads
from elynav_nb.errors import InvalidInput, OperationTimeout, ToolFailed

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_TOOL_TIMEOUT",
    "KernelTool",
    "agent_tool",
    "check_max_result_bytes",
    "check_tool_timeout",
]

DEFAULT_TOOL_TIMEOUT = 60.0
DEFAULT_MAX_RESULT_BYTES = 64 * 1024
MIN_RESULT_BYTES = 1024
_CANCEL_GRACE_SECONDS = 1.0
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class _ToolTimedOut(Exception):
    pass


class _ToolCancelledItself(Exception):
    pass


class KernelTool:
    """A function offered to an agent: ``name``, ``description``, ``parameters`` (JSON Schema), ``call``.

    Made by ``@agent_tool``. Calling the object directly (``tool(1, 2)``) runs the plain function,
    unchecked, as before it was decorated; ``await tool.call({...})`` is the agent's way in.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str,
        description: str,
        arguments: ArgumentSpec,
        is_async: bool,
    ) -> None:
        self.function = function
        self.name = name
        self.description = description
        self.is_async = is_async
        self._arguments = arguments

    @property
    def parameters(self) -> dict[str, Any]:
        """The input JSON Schema (an ``object`` schema; a copy, safe to change)."""
        return copy.deepcopy(self._arguments.schema)

    @property
    def parameter_names(self) -> list[str]:
        return self._arguments.parameter_names

    def definition(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}``: what an agent is told about the tool."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    async def call(
        self,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float = DEFAULT_TOOL_TIMEOUT,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    ) -> ToolOutcome:
        """Run the tool on ``arguments`` (a JSON object) and return its ``ToolOutcome``; never raises for it."""
        timeout = check_tool_timeout(timeout)
        max_result_bytes = check_max_result_bytes(max_result_bytes)
        started = time.perf_counter()
        try:
            positional, keyword = self._arguments.validate(arguments)
        except InvalidInput as error:
            return error_outcome(self.name, error, time.perf_counter() - started)
        try:
            result = await self._run_bounded(positional, keyword, timeout, max_result_bytes)
        except _ToolTimedOut:
            still_running = "" if self.is_async else "; its thread may still be running in the kernel"
            timed_out = OperationTimeout(
                f"tool {self.name!r} did not finish within {timeout:g} s and was cut off{still_running}",
                details={"timeout_seconds": timeout},
            )
            return error_outcome(self.name, timed_out, time.perf_counter() - started)
        except _ToolCancelledItself:
            cancelled = ToolFailed(f"tool {self.name!r} was cancelled from inside", details={})
            return error_outcome(self.name, cancelled, time.perf_counter() - started)
        except asyncio.CancelledError:
            raise
        except BaseException as exception:  # whatever the tool raised, SystemExit included
            if isinstance(exception, (KeyboardInterrupt, GeneratorExit)) and self.is_async:
                raise
            return exception_outcome(self.name, exception, time.perf_counter() - started)
        prepared = result if isinstance(result, _Prepared) else _prepare(result, max_result_bytes)
        seconds = time.perf_counter() - started
        if isinstance(prepared.problem, NotJsonValue):
            refused = ToolFailed(
                f"tool {self.name!r} returned a value with no JSON form: {prepared.problem}",
                details={"result_type": prepared.result_type},
            )
            return error_outcome(self.name, refused, seconds)
        if prepared.problem is not None:  # a value whose conversion itself breaks (a broken __iter__...)
            return exception_outcome(self.name, prepared.problem, seconds)
        return ToolOutcome(False, prepared.text, prepared.structured, self.name, seconds)

    async def _run_bounded(
        self, positional: list[Any], keyword: dict[str, Any], timeout: float, max_result_bytes: int
    ) -> Any:
        """The tool's raw result (async tools) or its ``_Prepared`` JSON (plain ones: converted on their
        thread, so that a big result does not hold the loop either)."""
        deadline = time.monotonic() + timeout
        if self.is_async:
            return await _await_bounded(self.function(*positional, **keyword), timeout)

        def run_and_prepare() -> Any:
            result = self.function(*positional, **keyword)
            if inspect.isawaitable(result):  # a plain function that hands back a coroutine: awaited below
                return result
            return _prepare(result, max_result_bytes)

        result = await _run_in_thread(run_and_prepare, [], {}, timeout, f"elynav-tool-{self.name}")
        if inspect.isawaitable(result):
            return await _await_bounded(result, max(0.0, deadline - time.monotonic()))
        return result

    def __repr__(self) -> str:
        kind = "async " if self.is_async else ""
        return f"KernelTool({kind}{self.name!r}, parameters={self.parameter_names})"

    def _repr_html_(self) -> str:
        names = ", ".join(html.escape(name) for name in self.parameter_names) or "no parameters"
        return (
            f"<b>{html.escape(self.name)}</b>({names}) <i>{'async ' if self.is_async else ''}kernel tool</i>"
            f"<br>{html.escape(self.description)}"
        )


@dataclass(frozen=True)
class _Prepared:
    """A result made JSON and bounded (``structured``, ``text``), or the ``problem`` that stopped it."""

    structured: Any = None
    text: str = ""
    problem: Exception | None = None
    result_type: str = ""


def _prepare(result: Any, max_result_bytes: int) -> _Prepared:
    try:
        value = to_json_value(result, max_items=max_result_bytes // 2 + 1)
        structured, text = bound_json(value, max_result_bytes)
    except Exception as problem:  # NotJsonValue, or a value whose own methods break
        return _Prepared(problem=problem, result_type=type(result).__qualname__)
    return _Prepared(structured, text)


async def _await_bounded(awaitable: Awaitable[Any], timeout: float) -> Any:
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        task.add_done_callback(_forget_outcome)
        await asyncio.wait({task}, timeout=_CANCEL_GRACE_SECONDS)
        raise _ToolTimedOut()
    if task.cancelled():
        raise _ToolCancelledItself()
    return task.result()


def _forget_outcome(task: asyncio.Future[Any]) -> None:
    """Read a late task's outcome so that asyncio does not log 'exception was never retrieved'."""
    if not task.cancelled():
        task.exception()


async def _run_in_thread(
    function: Callable[..., Any], positional: list[Any], keyword: dict[str, Any], timeout: float, name: str
) -> Any:
    """``function(*positional, **keyword)`` on a daemon thread of its own, awaited for at most ``timeout``."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: Any, exception: BaseException | None) -> None:
        if future.done():  # timed out or cancelled: the late outcome is dropped
            return
        if exception is not None:
            future.set_exception(exception)
        else:
            future.set_result(result)

    def work() -> None:
        threading.current_thread().name = name  # which tool a thread runs, for threading.enumerate()
        try:
            result = context.run(function, *positional, **keyword)
        except BaseException as exception:  # handed to the loop, whatever it is
            outcome: tuple[Any, BaseException | None] = (None, exception)
        else:
            outcome = (result, None)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:  # the loop closed while the tool ran
            pass

    tool_threads.run(work)
    try:
        done, _ = await asyncio.wait({future}, timeout=timeout)
    except asyncio.CancelledError:
        future.cancel()
        raise
    if not done:
        future.cancel()
        raise _ToolTimedOut()
    return future.result()


def check_tool_timeout(timeout: float) -> float:
    """``timeout`` as seconds when it is a positive finite number; ``InvalidInput`` otherwise."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout):
        raise InvalidInput(f"tool_timeout must be a positive number of seconds, not {timeout!r}")
    if timeout <= 0:
        raise InvalidInput(f"tool_timeout must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


def check_max_result_bytes(max_bytes: int) -> int:
    """``max_bytes`` when it is an int of at least 1 KiB; ``InvalidInput`` otherwise."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < MIN_RESULT_BYTES:
        raise InvalidInput(
            f"max_result_bytes must be an int of at least {MIN_RESULT_BYTES}, not {max_bytes!r}"
        )
    return max_bytes


def _is_async_callable(function: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(function):
        return True
    call_method = getattr(type(function), "__call__", None)
    return call_method is not None and inspect.iscoroutinefunction(call_method)


def make_kernel_tool(function: Any, *, name: str | None = None, description: str | None = None) -> KernelTool:
    """The ``KernelTool`` of ``function`` (the work of ``@agent_tool``); ``InvalidInput`` saying what to fix."""
    if isinstance(function, KernelTool):
        if name is None and description is None:
            return function
        name = name if name is not None else function.name
        description = description if description is not None else function.description
        function = function.function
    if not callable(function) or isinstance(function, type):
        raise InvalidInput(f"agent_tool needs a function, not {type(function).__name__}")
    if name is None:
        name = getattr(function, "__name__", None)
        if not isinstance(name, str):
            raise InvalidInput("this callable has no __name__: give one with @agent_tool(name=...)")
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        raise InvalidInput(
            f"tool name {name!r} is not valid: 1 to 64 letters, digits, '_' or '-' (agents' APIs allow no more);"
            " give one with @agent_tool(name=...)"
        )
    documented = underlying_function(function)
    docstring = inspect.getdoc(documented)
    if docstring is None and documented is not function:
        docstring = inspect.getdoc(function)  # a callable object documented on its class
    facts = read_docstring(docstring)
    if description is None:
        description = facts.summary
    if not isinstance(description, str) or not description.strip():
        raise InvalidInput(
            f"tool {name!r} has no description: write a docstring (its first paragraph is what the agent reads)"
            " or give @agent_tool(description=...)"
        )
    arguments = build_argument_spec(name, function, facts.parameters)
    return KernelTool(
        function,
        name=name,
        description=description.strip(),
        arguments=arguments,
        is_async=_is_async_callable(function),
    )


@overload
def agent_tool(function: Callable[..., Any], /) -> KernelTool: ...


@overload
def agent_tool(
    *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[..., Any]], KernelTool]: ...


def agent_tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> KernelTool | Callable[[Callable[..., Any]], KernelTool]:
    """Make a plain or ``async`` function a ``KernelTool``: ``@agent_tool`` or ``@agent_tool(name=..., ...)``.

    The name is the function's (or ``name``); the description is the docstring's first paragraph (or
    ``description``); the input JSON Schema comes from the type hints and the docstring's ``Args:`` /
    ``Parameters`` section. A function that cannot be a tool is refused here with ``InvalidInput``.
    """
    if function is not None:
        return make_kernel_tool(function, name=name, description=description)

    def decorate(target: Callable[..., Any]) -> KernelTool:
        return make_kernel_tool(target, name=name, description=description)

    return decorate
