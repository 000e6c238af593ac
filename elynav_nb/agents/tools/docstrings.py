"""Read a tool function's docstring: its summary and the description of each parameter.

Where it sits: called by ``kernel_tool`` when ``@agent_tool`` turns a function into a ``KernelTool``;
the summary becomes the tool's description, the parameter texts go into its input JSON Schema.
Pure: text in, text out.

Two styles are understood, the ones Python projects write:

Google::

    Args:
        n (int): how many rows.
        column: the column to count,
            continued on an indented line.

numpy::

    Parameters
    ----------
    n : int
        How many rows.

A docstring in neither style still gives its summary (the first paragraph); its parameters then
have no description.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["DocstringFacts", "read_docstring"]

_GOOGLE_PARAMETER_HEADERS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
_GOOGLE_HEADER = re.compile(r"([A-Za-z][A-Za-z ]*):\s*")
_GOOGLE_ENTRY = re.compile(r"\*{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)")
_NUMPY_UNDERLINE = re.compile(r"\s*-{3,}\s*")
_NUMPY_ENTRY = re.compile(r"\*{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(:.*)?")


class DocstringFacts:
    """What a docstring says: ``summary`` (first paragraph, one line) and ``parameters`` (name -> text)."""

    def __init__(self, summary: str, parameters: dict[str, str]) -> None:
        self.summary = summary
        self.parameters = parameters

    def __repr__(self) -> str:
        return f"DocstringFacts(summary={self.summary!r}, parameters={self.parameters!r})"


def read_docstring(docstring: str | None) -> DocstringFacts:
    """The summary and parameter descriptions of ``docstring`` (empty when there is none)."""
    if not docstring:
        return DocstringFacts("", {})
    lines = inspect.cleandoc(docstring).splitlines()
    parameters = _google_parameters(lines) or _numpy_parameters(lines)
    return DocstringFacts(_summary(lines), parameters)


def _summary(lines: list[str]) -> str:
    paragraph: list[str] = []
    for position, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            if paragraph:
                break
            continue
        if _is_section_start(lines, position):
            break
        paragraph.append(stripped)
    return " ".join(paragraph)


def _is_section_start(lines: list[str], position: int) -> bool:
    header = _GOOGLE_HEADER.fullmatch(lines[position].strip())
    if header and header.group(1).strip().lower() in _GOOGLE_PARAMETER_HEADERS | {"returns", "raises"}:
        return True
    return position + 1 < len(lines) and bool(_NUMPY_UNDERLINE.fullmatch(lines[position + 1]))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_parameters(lines: list[str]) -> dict[str, str]:
    parameters: dict[str, str] = {}
    in_section = False
    section_indent = 0
    entry_indent: int | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        header = _GOOGLE_HEADER.fullmatch(stripped)
        if not in_section:
            if header and header.group(1).strip().lower() in _GOOGLE_PARAMETER_HEADERS:
                in_section, section_indent, entry_indent, current = True, _indent(line), None, None
            continue
        if not stripped:
            continue
        indent = _indent(line)
        if indent <= section_indent:
            in_section = bool(header and header.group(1).strip().lower() in _GOOGLE_PARAMETER_HEADERS)
            section_indent, entry_indent, current = indent, None, None
            continue
        if entry_indent is None:
            entry_indent = indent
        entry = _GOOGLE_ENTRY.fullmatch(stripped)
        if indent == entry_indent and entry:
            current = entry.group("name")
            parameters[current] = entry.group("text").strip()
        elif current is not None:
            parameters[current] = f"{parameters[current]} {stripped}".strip()
    return parameters


def _numpy_parameters(lines: list[str]) -> dict[str, str]:
    parameters: dict[str, str] = {}
    position = 0
    while position < len(lines):
        is_header = lines[position].strip().lower() in {"parameters", "other parameters"}
        if is_header and position + 1 < len(lines) and _NUMPY_UNDERLINE.fullmatch(lines[position + 1]):
            position = _read_numpy_section(lines, position + 2, _indent(lines[position]), parameters)
        else:
            position += 1
    return parameters


def _read_numpy_section(
    lines: list[str], position: int, section_indent: int, parameters: dict[str, str]
) -> int:
    current: str | None = None
    while position < len(lines):
        line = lines[position]
        stripped = line.strip()
        next_is_underline = position + 1 < len(lines) and bool(
            _NUMPY_UNDERLINE.fullmatch(lines[position + 1])
        )
        if stripped and next_is_underline:
            return position  # the next section starts here
        if not stripped:
            position += 1
            continue
        entry = _NUMPY_ENTRY.fullmatch(stripped)
        if _indent(line) <= section_indent and entry:
            current = entry.group("name")
            parameters[current] = ""
        elif current is not None:
            parameters[current] = f"{parameters[current]} {stripped}".strip()
        position += 1
    return position
