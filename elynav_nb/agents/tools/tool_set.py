"""``kernel_tools(...)`` and ``KernelToolSet``: the tools one agent may call, with one timeout and one bound.

Where it sits: the user gathers functions, ``KernelTool`` objects and other sets (``df_tools(...)``)
into one set; later a runner serves that set in the kernel (the transport is not part of this
package). The set answers ``await tool_set.call(name, arguments)`` and shows itself as a table.
No I/O here.

Rules, checked when the set is built, before anything runs:

- every item is a function (made a tool as by ``@agent_tool``), a ``KernelTool`` or a ``KernelToolSet``;
- names are unique: a name given twice (two tools, or a tool and a set that has it) is ``INVALID_INPUT``
  naming it; nothing is replaced silently.

``tool_timeout`` (seconds, default 60) and ``max_result_bytes`` (default 64 KiB) belong to the set and
apply to each of its tools; a set merged into another takes the new set's values.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from elynav_nb.agents.tools.kernel_tool import (
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_TOOL_TIMEOUT,
    KernelTool,
    check_max_result_bytes,
    check_tool_timeout,
    make_kernel_tool,
)
from elynav_nb.agents.tools.outcome import ToolOutcome, error_outcome
from elynav_nb.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    import pandas

__all__ = ["KernelToolSet", "kernel_tools", "tool_set_of"]


class KernelToolSet:
    """Named kernel tools with a shared ``tool_timeout`` and ``max_result_bytes``.

    Iterate it for the tools; ``set["name"]`` gives one; ``await set.call(name, arguments)`` runs one;
    ``to_frame()`` lists them; ``definitions()`` is what an agent is told.
    """

    def __init__(
        self,
        tools: list[KernelTool] | tuple[KernelTool, ...] = (),
        *,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    ) -> None:
        self._tools: dict[str, KernelTool] = {}
        for tool in tools:
            if not isinstance(tool, KernelTool):
                raise InvalidInput(f"a KernelToolSet holds KernelTool objects, not {type(tool).__name__}")
            if tool.name in self._tools:
                raise InvalidInput(
                    f"two tools are named {tool.name!r}: give one another name with @agent_tool(name=...)"
                    " (or df_tools(frame, name=...))",
                    details={"name": tool.name},
                )
            self._tools[tool.name] = tool
        self._tool_timeout = check_tool_timeout(tool_timeout)
        self._max_result_bytes = check_max_result_bytes(max_result_bytes)

    @property
    def tool_timeout(self) -> float:
        """Seconds one call may take before it is cut off with a ``TIMEOUT`` tool error."""
        return self._tool_timeout

    @tool_timeout.setter
    def tool_timeout(self, seconds: float) -> None:
        self._tool_timeout = check_tool_timeout(seconds)

    @property
    def max_result_bytes(self) -> int:
        """The bound on one result's JSON text, in bytes; a bigger result is cut and says so."""
        return self._max_result_bytes

    @max_result_bytes.setter
    def max_result_bytes(self, max_bytes: int) -> None:
        self._max_result_bytes = check_max_result_bytes(max_bytes)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self) -> Iterator[KernelTool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> KernelTool:
        tool = self._tools.get(name)
        if tool is None:
            raise NotFound(f"no tool named {name!r} in this set (tools: {', '.join(self._tools) or 'none'})")
        return tool

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolOutcome:
        """Run the tool ``name`` with the set's bounds; an unknown name is a ``NOT_FOUND`` tool error."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            missing = NotFound(f"no tool named {name!r} (tools: {known})", details={"name": str(name)})
            return error_outcome(str(name), missing)
        return await tool.call(arguments, timeout=self._tool_timeout, max_result_bytes=self._max_result_bytes)

    def definitions(self) -> list[dict[str, Any]]:
        """One ``{"name", "description", "parameters"}`` per tool, in order."""
        return [tool.definition() for tool in self._tools.values()]

    def to_frame(self) -> pandas.DataFrame:
        """One row per tool: ``name``, ``description``, ``parameters`` (e.g. ``n: integer = 5``)."""
        import pandas

        rows = [
            {"name": tool.name, "description": tool.description, "parameters": parameters_summary(tool)}
            for tool in self._tools.values()
        ]
        return pandas.DataFrame(rows, columns=["name", "description", "parameters"])

    def __repr__(self) -> str:
        return f"KernelToolSet({self.names}, tool_timeout={self._tool_timeout:g}, max_result_bytes={self._max_result_bytes})"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><code>{html.escape(tool.name)}</code></td><td>{html.escape(tool.description)}</td>"
            f"<td><code>{html.escape(parameters_summary(tool))}</code></td></tr>"
            for tool in self._tools.values()
        )
        return (
            f"<b>Kernel tools</b>: {len(self._tools)} (timeout {self._tool_timeout:g} s,"
            f" results up to {self._max_result_bytes:,} bytes)"
            "<table><thead><tr><th>name</th><th>description</th><th>parameters</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )


def parameters_summary(tool: KernelTool) -> str:
    """``a: integer, b: number = 1.0``: a tool's parameters on one line, for people."""
    schema = tool.parameters
    required = set(schema.get("required", []))
    parts: list[str] = []
    for name, property_schema in schema.get("properties", {}).items():
        text = f"{name}: {_type_label(property_schema)}"
        if name not in required:
            text += f" = {property_schema['default']!r}" if "default" in property_schema else " (optional)"
        parts.append(text)
    return ", ".join(parts)


def _type_label(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(repr(value) for value in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    if "anyOf" in schema:
        return " | ".join(_type_label(option) for option in schema["anyOf"])
    kind = schema.get("type")
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return f"array of {_type_label(schema['items'])}"
    if isinstance(kind, str):
        return kind
    return "any"


def kernel_tools(
    *items: Any,
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
) -> KernelToolSet:
    """One ``KernelToolSet`` from functions, ``KernelTool`` objects and other sets, in order.

    A name given twice is refused with ``InvalidInput`` before any tool runs.
    """
    tools: list[KernelTool] = []
    for item in items:
        if isinstance(item, KernelToolSet):
            tools.extend(item)
        elif isinstance(item, KernelTool):
            tools.append(item)
        elif callable(item) and not isinstance(item, type):
            tools.append(make_kernel_tool(item))
        else:
            raise InvalidInput(
                f"kernel_tools takes functions, KernelTool objects and KernelToolSet objects, not"
                f" {type(item).__name__} (a list? pass its items: kernel_tools(*items))"
            )
    return KernelToolSet(tools, tool_timeout=tool_timeout, max_result_bytes=max_result_bytes)


def tool_set_of(tools: Any) -> KernelToolSet:
    """What ``AgentRunner(tools=...)`` takes as one set: a set as given; a function, a tool or a list gathered.

    ``INVALID_INPUT`` for anything else, and for a set without a tool (leave ``tools=`` out instead).
    """
    if isinstance(tools, KernelToolSet):
        tool_set = tools
    elif isinstance(tools, (KernelTool, str, bytes)) or callable(tools):
        tool_set = kernel_tools(tools)
    elif isinstance(tools, Sequence):
        tool_set = kernel_tools(*tools)
    else:
        raise InvalidInput(
            f"tools= takes kernel_tools(...), a function, a KernelTool or a list of them, not {type(tools).__name__}"
        )
    if not len(tool_set):
        raise InvalidInput("tools= was given no tool: leave it out, or pass kernel_tools(f, g, ...)")
    return tool_set
