"""A tool's return value as plain JSON, and that JSON kept under a size bound.

Where it sits: ``kernel_tool`` passes every result through ``to_json_value`` then ``bound_json`` before
building the ``ToolOutcome``; the frame tools use ``frame_records`` and ``rows_that_fit`` to cut their
rows themselves. Pure: no I/O (pandas and numpy are looked at only when the value is one of theirs).

Conversions (anything else is refused with ``NotJsonValue`` naming the place and the type):

==========================================  ==================================================
value                                       JSON
==========================================  ==================================================
None, bool, int, str                        as is
float                                       as is; NaN and infinities -> null
numpy scalar / array                        its Python value / a list
pandas DataFrame                            records (one object per row; a non-default index
                                            becomes columns)
pandas Series                               records ``{<index name>: ..., <name or "value">: ...}``
pandas NA, NaT                              null
datetime, date, time (pandas Timestamp)     ISO 8601 text
timedelta (pandas Timedelta)                seconds (a number)
Decimal, UUID, Path                         text
Enum                                        its value
set, frozenset                              a list (sorted when the items can be sorted)
tuple, list; dict, Mapping                  a list; an object (keys: text, numbers, booleans)
dataclass instance, pydantic model          an object of its fields
==========================================  ==================================================

Size: ``bound_json`` measures the compact UTF-8 JSON text. Over the bound, a list keeps the items that
fit, an object keeps everything but its biggest list, cut to fit (``"truncated": true`` and the total
count say so); anything else becomes the text's beginning under ``"text_prefix"``.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import math
import uuid
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

__all__ = [
    "NotJsonValue",
    "bound_json",
    "dumps",
    "frame_records",
    "rows_that_fit",
    "to_json_value",
]

_MAX_DEPTH = 64


class NotJsonValue(Exception):
    """The value (or a part of it, at ``place``) has no JSON form. Internal: becomes a tool error."""

    def __init__(self, type_name: str, hint: str = "") -> None:
        super().__init__(type_name)
        self.type_name = type_name
        self.hint = hint
        self.parts: list[str] = []  # filled on the way up: ["['rows']", "[3]"]

    @property
    def place(self) -> str:
        return "".join(self.parts)

    def __str__(self) -> str:
        place = f"the result at {self.place}" if self.parts else "the result"
        return f"{place} is a {self.type_name}, which cannot be sent as JSON{self.hint}"


def dumps(value: Any) -> str:
    """Compact JSON text of an already converted value (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def json_size(value: Any) -> int:
    return len(dumps(value).encode("utf-8"))


def to_json_value(value: Any, *, max_items: int | None = None) -> Any:
    """``value`` as plain JSON data (dict, list, str, int, float, bool, None); ``NotJsonValue`` if it has none.

    ``max_items`` bounds how many items of a list, tuple, DataFrame, Series or numpy array are converted
    (the rest could never fit the byte bound anyway); the list then carries the total in ``total_items``.
    """
    return _convert(value, 0, max_items)


class _CutList(list[Any]):
    """A list made from the first items of something longer; ``total_items`` is the full length."""

    total_items: int = 0


def _convert(value: Any, depth: int, max_items: int | None) -> Any:
    if depth > _MAX_DEPTH:
        raise NotJsonValue("structure nested more than 64 levels deep (or a cycle)")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return _convert_items(value, depth, max_items)
    if isinstance(value, dict):
        return _convert_mapping(value, depth, max_items)
    converted = _convert_special(value, depth, max_items)
    if converted is not _NO_CONVERSION:
        return converted
    if isinstance(value, Mapping):
        return _convert_mapping(value, depth, max_items)
    hint = "; return text (str(...)) or plain data" if not isinstance(value, bytes) else "; decode it to text"
    raise NotJsonValue(type(value).__qualname__, hint)


_NO_CONVERSION = object()


def _convert_items(items: list[Any] | tuple[Any, ...], depth: int, max_items: int | None) -> list[Any]:
    head = items if max_items is None or len(items) <= max_items else items[:max_items]
    converted: list[Any] = []
    for index, item in enumerate(head):
        try:
            converted.append(_convert(item, depth + 1, max_items))
        except NotJsonValue as problem:
            problem.parts.insert(0, f"[{index}]")
            raise
    return _cut(converted, len(items)) if len(head) < len(items) else converted


def _convert_special(value: Any, depth: int, max_items: int | None) -> Any:
    """Conversions of library types; ``_NO_CONVERSION`` when ``value`` is none of them."""
    type_module = type(value).__module__.split(".")[0]
    if type_module == "pandas":
        return _convert_pandas(value, depth, max_items)
    if type_module == "numpy":
        return _convert_numpy(value, depth, max_items)
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return _convert(value.value, depth + 1, max_items)
    if isinstance(value, (decimal.Decimal, uuid.UUID, PurePath)):
        return str(value) if not (isinstance(value, decimal.Decimal) and not value.is_finite()) else None
    if isinstance(value, (set, frozenset)):
        items = _convert_items(list(value), depth, None)
        try:
            return sorted(items)
        except TypeError:
            return items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
        return _convert_mapping(fields, depth, max_items)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and hasattr(type(value), "model_fields"):
        return _convert(model_dump(mode="json"), depth + 1, max_items)
    return _NO_CONVERSION


def _convert_mapping(value: Mapping[Any, Any], depth: int, max_items: int | None) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, item in value.items():
        text_key = _json_key(key)
        try:
            result[text_key] = _convert(item, depth + 1, max_items)
        except NotJsonValue as problem:
            problem.parts.insert(0, f"[{text_key!r}]")
            raise
    return result


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, tuple):
        return ".".join(_json_key(part) for part in key)
    converted = _convert(key, _MAX_DEPTH, None) if not isinstance(key, (list, dict)) else key
    if converted is None or isinstance(converted, (bool, int, float, str)):
        return dumps(converted) if not isinstance(converted, str) else converted
    raise NotJsonValue(f"mapping with a {type(key).__qualname__} key")


def _convert_numpy(value: Any, depth: int, max_items: int | None) -> Any:
    import numpy

    if isinstance(value, numpy.ndarray):
        head = value if max_items is None else value[:max_items]
        converted = _convert_items(head.tolist(), depth, None)
        return _cut(converted, len(value)) if len(head) < len(value) else converted
    if isinstance(value, numpy.datetime64):
        if numpy.isnat(value):
            return None
        import pandas

        return pandas.Timestamp(value).isoformat()
    if isinstance(value, numpy.timedelta64):
        if numpy.isnat(value):
            return None
        return float(value / numpy.timedelta64(1, "s"))
    if isinstance(value, numpy.generic):
        return _convert(value.item(), depth + 1, max_items)
    return _NO_CONVERSION


def _convert_pandas(value: Any, depth: int, max_items: int | None) -> Any:
    import pandas

    if value is pandas.NA or value is pandas.NaT:
        return None
    if isinstance(value, pandas.DataFrame):
        head = value if max_items is None else value.iloc[:max_items]
        records = _convert_items(frame_records(head), depth, None)
        return _cut(records, len(value)) if len(head) < len(value) else records
    if isinstance(value, pandas.Series):
        series_head = value if max_items is None else value.iloc[:max_items]
        records = _convert_items(frame_records(_series_as_frame(series_head)), depth, None)
        return _cut(records, len(value)) if len(series_head) < len(value) else records
    if isinstance(value, pandas.Timedelta):
        return value.total_seconds()
    if isinstance(value, pandas.Timestamp):
        return value.isoformat()
    if isinstance(value, (pandas.Index, pandas.api.extensions.ExtensionArray)):
        index_head = value if max_items is None else value[:max_items]
        converted = _convert_items(list(index_head), depth, None)
        return _cut(converted, len(value)) if len(index_head) < len(value) else converted
    if isinstance(value, pandas.Interval):
        return {
            "left": _convert(value.left, depth + 1, None),
            "right": _convert(value.right, depth + 1, None),
        }
    if isinstance(value, pandas.Period):
        return str(value)
    return _NO_CONVERSION


def _cut(items: list[Any], total: int) -> _CutList:
    cut = _CutList(items)
    cut.total_items = total
    return cut


def _series_as_frame(series: Any) -> Any:
    import pandas

    value_name = str(series.name) if series.name is not None else "value"
    frame = pandas.DataFrame({value_name: series})
    return frame


def frame_records(frame: Any, *, include_index: bool | None = None) -> list[dict[str, Any]]:
    """The rows of ``frame`` as ``{column: value}`` dicts (values not yet converted to JSON).

    The index becomes columns when it says something (``include_index=None``: unless it is the default
    ``0..n-1`` range of the frame it came from, judged on ``frame`` itself).
    """
    import pandas

    if include_index is None:
        index = frame.index
        include_index = not (isinstance(index, pandas.RangeIndex) and index.start == 0 and index.step == 1)
    if include_index:
        frame = _index_as_columns(frame)
    column_names = [_column_name(label) for label in frame.columns]
    if len(set(column_names)) < len(column_names):
        column_names = _unique_names(column_names)
    records: list[dict[str, Any]] = []
    for row in frame.itertuples(index=False, name=None):
        records.append(dict(zip(column_names, row, strict=True)))
    return records


def _index_as_columns(frame: Any) -> Any:
    names = [name for name in frame.index.names]
    level_names = [
        str(name) if name is not None else ("index" if len(names) == 1 else f"level_{position}")
        for position, name in enumerate(names)
    ]
    existing = {_column_name(label) for label in frame.columns}
    level_names = [name if name not in existing else f"index_{name}" for name in level_names]
    renamed = frame.copy(deep=False)
    renamed.index = renamed.index.set_names(level_names)
    return renamed.reset_index()


def _column_name(label: Any) -> str:
    if isinstance(label, tuple):
        return ".".join(str(part) for part in label)
    return str(label)


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    unique: list[str] = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        unique.append(name if count == 0 else f"{name}.{count}")
    return unique


def rows_that_fit(rows: list[Any], max_bytes: int) -> int:
    """How many of the first (converted) ``rows`` fit in ``max_bytes`` of JSON list text."""
    used = 2  # the brackets
    for count, row in enumerate(rows):
        used += json_size(row) + (1 if count else 0)
        if used > max_bytes:
            return count
    return len(rows)


def bound_json(value: Any, max_bytes: int) -> tuple[Any, str]:
    """``(value, text)`` of a converted value, cut to ``max_bytes`` of JSON text when it is bigger."""
    text = dumps(value)
    total_bytes = len(text.encode("utf-8"))
    if total_bytes <= max_bytes and getattr(value, "total_items", None) is None:
        return value, text
    envelope_bytes = 120
    if isinstance(value, list):
        total = getattr(value, "total_items", None) or len(value)
        kept = value[: rows_that_fit(value, max_bytes - envelope_bytes)]
        if kept or not value:
            cut: dict[str, Any] = {
                "truncated": True,
                "total_items": total,
                "returned_items": len(kept),
                "items": list(kept),
            }
            return cut, dumps(cut)
    if isinstance(value, dict):
        biggest = _biggest_list_key(value)
        if biggest is not None:
            others = {key: item for key, item in value.items() if key != biggest}
            room = max_bytes - json_size(others) - len(biggest.encode("utf-8")) - envelope_bytes
            items: list[Any] = value[biggest]
            kept = items[: rows_that_fit(items, room)] if room > 2 else []
            if kept:
                total = getattr(items, "total_items", None) or len(items)
                cut = {**others, biggest: list(kept), "truncated": True, f"total_{biggest}": total}
                return cut, dumps(cut)
    return _text_prefix(text, total_bytes, max_bytes - envelope_bytes)


def _text_prefix(text: str, total_bytes: int, room: int) -> tuple[Any, str]:
    """The beginning of the JSON text, as a string value, its escaped form under ``room`` bytes."""
    prefix = text.encode("utf-8")[: max(0, room)].decode("utf-8", "ignore")
    while True:
        cut = {"truncated": True, "total_bytes": total_bytes, "text_prefix": prefix}
        cut_text = dumps(cut)
        overshoot = len(cut_text.encode("utf-8")) - room - 120
        if overshoot <= 0 or not prefix:
            return cut, cut_text
        prefix = prefix[: max(0, len(prefix) - overshoot)]


def _biggest_list_key(value: dict[str, Any]) -> str | None:
    biggest: str | None = None
    biggest_size = -1
    for key, item in value.items():
        if isinstance(item, list):
            size = json_size(item)
            if size > biggest_size:
                biggest, biggest_size = key, size
    return biggest
