"""``df_tools(frame, name=...)``: a pandas DataFrame of the kernel offered to an agent, read-only.

Where it sits: the user builds a ``KernelToolSet`` for one frame (numpy- or Arrow-backed) and merges it
with others through ``kernel_tools``. Six tools, all named ``<name>_...``:

=====================  ===============================================================
``<name>_describe``    row count; per column: name, dtype, non-null count, an example
``<name>_head``        the first ``n`` rows (optionally some columns only)
``<name>_sample``      ``n`` random rows (``seed`` makes them repeatable)
``<name>_query``       rows where a pandas ``query`` condition holds, checked by ``query_rules``
``<name>_value_counts``  how often each value of one column appears, most frequent first
``<name>_groupby_agg``   one column aggregated per group (count, sum, mean, min, max, median, nunique)
=====================  ===============================================================

How data flows: each tool holds the frame object itself (not a copy) and reads it as it is at the
moment of the call, so a column added or a value changed in the notebook is seen by the next call;
rebinding the variable (``frame = frame[...]``) makes a new object that the tools do not see. Nothing is
written to the frame. Every result is bounded: at most ``max_rows`` rows (groups, values) and
``max_bytes`` of JSON text, a text cell longer than 1,000 characters is cut, and a cut result says so
(``"truncated": true`` with ``"total_rows"``).
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Annotated, Any, Literal

import numpy
import pandas
from pandas.api import types as pandas_types
from pydantic import Field

from elynav_nb.agents.tools.json_values import frame_records, json_size, rows_that_fit, to_json_value
from elynav_nb.agents.tools.kernel_tool import KernelTool, check_max_result_bytes, make_kernel_tool
from elynav_nb.agents.tools.query_eval import evaluate_mask
from elynav_nb.agents.tools.query_rules import compile_query
from elynav_nb.agents.tools.tool_set import KernelToolSet
from elynav_nb.errors import InvalidInput

__all__ = ["AGGREGATIONS", "df_tools"]

AGGREGATIONS = ("count", "sum", "mean", "min", "max", "median", "nunique")
MAX_CELL_CHARS = 1000
MAX_ROWS_LIMIT = 10_000
_TABLE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,40}")

Aggregation = Literal["count", "sum", "mean", "min", "max", "median", "nunique"]
GroupOrder = Literal["by_key", "largest_first", "smallest_first"]
RowCount = Annotated[int, Field(ge=1)]


def df_tools(
    frame: pandas.DataFrame,
    name: str = "accounts",
    max_rows: int = 50,
    max_bytes: int = 64 * 1024,
) -> KernelToolSet:
    """A ``KernelToolSet`` that lets an agent read ``frame`` (describe, head, sample, query, value counts,
    group-by aggregates), each result at most ``max_rows`` rows and ``max_bytes`` of JSON."""
    if not isinstance(frame, pandas.DataFrame):
        raise InvalidInput(f"df_tools needs a pandas DataFrame, not {type(frame).__name__}")
    if not isinstance(name, str) or not _TABLE_NAME.fullmatch(name):
        raise InvalidInput(
            f"df_tools name {name!r} is not valid: a letter then up to 40 letters, digits or '_'"
            " (it prefixes the tool names, such as accounts_query)"
        )
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or not 1 <= max_rows <= MAX_ROWS_LIMIT:
        raise InvalidInput(f"max_rows must be an int from 1 to {MAX_ROWS_LIMIT}, not {max_rows!r}")
    max_bytes = check_max_result_bytes(max_bytes)
    reader = _FrameReader(frame, name, max_rows, max_bytes)
    return KernelToolSet(reader.tools(), max_result_bytes=max_bytes)


class _FrameReader:
    """The six tools' bodies over one frame; every method reads ``self.frame`` afresh."""

    def __init__(self, frame: pandas.DataFrame, name: str, max_rows: int, max_bytes: int) -> None:
        self.frame = frame
        self.name = name
        self.max_rows = max_rows
        self.max_bytes = max_bytes

    def tools(self) -> list[KernelTool]:
        table, most = self.name, self.max_rows

        def describe() -> dict[str, Any]:
            return self.describe()

        def head(n: RowCount = 5, columns: list[str] | None = None) -> dict[str, Any]:
            return self.head(n, columns)

        def sample(
            n: RowCount = 5, seed: int | None = None, columns: list[str] | None = None
        ) -> dict[str, Any]:
            return self.sample(n, seed, columns)

        def query(expression: str, columns: list[str] | None = None) -> dict[str, Any]:
            return self.query(expression, columns)

        def value_counts(column: str, n: RowCount = 10) -> dict[str, Any]:
            return self.value_counts(column, n)

        def groupby_agg(
            by: str | list[str], column: str, agg: Aggregation, order: GroupOrder = "by_key"
        ) -> dict[str, Any]:
            return self.groupby_agg(by, column, agg, order)

        columns_text = "columns: only these columns in the rows (default: all)."
        describe.__doc__ = (
            f"Describe the {table} table (a pandas DataFrame in the user's notebook): its row count and, per"
            " column, the name, dtype, non-null count and an example value. Call it first."
        )
        head.__doc__ = f"""The first n rows of the {table} table.

        Args:
            n: how many rows (at most {most}).
            {columns_text}
        """
        sample.__doc__ = f"""n random rows of the {table} table.

        Args:
            n: how many rows (at most {most}).
            seed: the same seed gives the same rows.
            {columns_text}
        """
        query.__doc__ = f"""Rows of the {table} table where a condition holds (at most {most} rows), and how many
        rows match. The condition is in pandas query syntax, for example: amount > 100 and kind == 'call';
        kind in ['call', 'email']; name.str.contains('acme', case=False); date >= '2024-01-01';
        `first name`.notna(). Allowed: column names (backticks around names with spaces), literals,
        comparisons, in / not in [list], and / or / not, + - * / // % **, and the methods isna, notna,
        between, str.contains (plain text), str.startswith, str.endswith, str.lower, str.upper, str.strip,
        str.len, dt.year / month / day / hour / dayofweek. Nothing else: no @variables, no other calls or
        attributes.

        Args:
            expression: the condition, in pandas query syntax.
            {columns_text}
        """
        value_counts.__doc__ = f"""How often each value of one column of the {table} table appears, most frequent first.

        Args:
            column: the column to count.
            n: how many values to list (at most {most}).
        """
        groupby_agg.__doc__ = f"""One column of the {table} table aggregated per group (at most {most} groups).

        Args:
            by: the column (or list of columns) to group by.
            column: the column to aggregate.
            agg: count, sum, mean, min, max, median or nunique (sum, mean and median need numbers).
            order: by_key (group keys ascending), largest_first or smallest_first (by the aggregate).
        """
        functions = [describe, head, sample, query, value_counts, groupby_agg]
        return [make_kernel_tool(function, name=f"{table}_{function.__name__}") for function in functions]

    # -- the tools' bodies --------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        frame = self.frame
        columns: list[dict[str, Any]] = []
        for position, label in enumerate(frame.columns):
            series = frame.iloc[:, position]
            present = series.notna().to_numpy(dtype=bool)
            present_positions = numpy.flatnonzero(present)
            example = series.iloc[int(present_positions[0])] if len(present_positions) else None
            columns.append(
                {
                    "name": str(label),
                    "dtype": str(series.dtype),
                    "non_null": int(len(present_positions)),
                    "example": _cut_text(to_json_value(example)),
                }
            )
        result: dict[str, Any] = {"table": self.name, "row_count": len(frame), "columns": columns}
        if _index_says_something(frame):
            result["index"] = {
                "names": [str(name) for name in frame.index.names],
                "dtype": str(frame.index.dtype),
            }
        return result

    def head(self, n: int, columns: list[str] | None) -> dict[str, Any]:
        frame = self.frame
        wanted = min(n, len(frame))
        count = min(wanted, self.max_rows)
        rows = self._selected(frame.iloc[:count], columns)
        return self._rows_result(rows, frame, total_rows=len(frame), requested=wanted)

    def sample(self, n: int, seed: int | None, columns: list[str] | None) -> dict[str, Any]:
        frame = self.frame
        wanted = min(n, len(frame))
        count = min(wanted, self.max_rows)
        rows = self._selected(frame.sample(n=count, random_state=seed) if count else frame.iloc[:0], columns)
        return self._rows_result(rows, frame, total_rows=len(frame), requested=wanted)

    def query(self, expression: str, columns: list[str] | None) -> dict[str, Any]:
        frame = self.frame
        plan = compile_query(expression, list(frame.columns))  # refused here, before any data is read
        selected_labels = self._labels(columns)
        try:
            mask = evaluate_mask(plan, frame)
        except InvalidInput:
            raise
        except (
            TypeError,
            ValueError,
            KeyError,
            AttributeError,
            ArithmeticError,
            NotImplementedError,
        ) as error:
            raise InvalidInput(f"the query could not be evaluated: {type(error).__name__}: {error}") from None
        positions = numpy.flatnonzero(mask)
        matching = len(positions)
        rows = frame.iloc[positions[: self.max_rows]]
        if selected_labels is not None:
            rows = rows.loc[:, selected_labels]
        result = self._rows_result(rows, frame, total_rows=matching, requested=matching)
        result["table_rows"] = len(frame)
        return result

    def value_counts(self, column: str, n: int) -> dict[str, Any]:
        frame = self.frame
        label = self._label(column)
        counts = frame[label].value_counts(dropna=False)
        count = min(n, self.max_rows, len(counts))
        values = [
            {"value": _cut_text(to_json_value(value)), "count": int(number)}
            for value, number in zip(counts.index[:count], counts.to_numpy()[:count], strict=True)
        ]
        result: dict[str, Any] = {"column": column, "values": values, "distinct_values": len(counts)}
        return self._fit(result, "values", total=len(counts), requested=min(n, len(counts)))

    def groupby_agg(self, by: str | list[str], column: str, agg: str, order: str) -> dict[str, Any]:
        frame = self.frame
        by_names = [by] if isinstance(by, str) else list(by)
        if not by_names:
            raise InvalidInput("by needs at least one column")
        by_labels = [self._label(name) for name in by_names]
        label = self._label(column)
        _check_aggregation(frame[label], column, agg)
        try:
            grouping: Any = frame.groupby(by_labels, dropna=False, observed=True, sort=True)
            grouped = grouping[label]
            aggregated = grouped.agg(agg)
            if order != "by_key":
                aggregated = aggregated.sort_values(ascending=order == "smallest_first", kind="stable")
        except (TypeError, ValueError, NotImplementedError) as error:
            raise InvalidInput(
                f"{agg} of {column!r} by {by_names} failed: {type(error).__name__}: {error}"
            ) from None
        count = min(self.max_rows, len(aggregated))
        value_name = f"{column}_{agg}"
        groups: list[dict[str, Any]] = []
        for key, value in zip(aggregated.index[:count], aggregated.to_numpy()[:count], strict=True):
            keys = key if isinstance(key, tuple) else (key,)
            group = {name: _cut_text(to_json_value(part)) for name, part in zip(by_names, keys, strict=True)}
            group[value_name] = to_json_value(value)
            groups.append(group)
        result: dict[str, Any] = {"by": by_names, "column": column, "agg": agg, "groups": groups}
        return self._fit(result, "groups", total=len(aggregated), requested=len(aggregated))

    # -- helpers -------------------------------------------------------------------------------------

    def _labels(self, columns: list[str] | None) -> list[Hashable] | None:
        return None if columns is None else [self._label(name) for name in columns]

    def _label(self, name: str) -> Hashable:
        labels = [label for label in self.frame.columns if str(label) == name]
        if len(labels) == 1:
            label: Hashable = labels[0]
            return label
        if labels:
            raise InvalidInput(f"the column name {name!r} is ambiguous: {len(labels)} columns have it")
        known = [str(label) for label in self.frame.columns]
        shown = ", ".join(known[:40]) + (f" and {len(known) - 40} more" if len(known) > 40 else "")
        raise InvalidInput(f"{name!r} is not a column of the {self.name} table (columns: {shown})")

    def _selected(self, rows: pandas.DataFrame, columns: list[str] | None) -> pandas.DataFrame:
        labels = self._labels(columns)
        return rows if labels is None else rows.loc[:, labels]

    def _rows_result(
        self, rows: pandas.DataFrame, frame: pandas.DataFrame, *, total_rows: int, requested: int
    ) -> dict[str, Any]:
        records = to_json_value(frame_records(rows, include_index=_index_says_something(frame)))
        cells_cut = _cut_cells(records)
        result: dict[str, Any] = {"rows": records, "total_rows": total_rows}
        if cells_cut:
            result["cells_cut_to_chars"] = MAX_CELL_CHARS
        return self._fit(result, "rows", total=total_rows, requested=requested)

    def _fit(self, result: dict[str, Any], key: str, *, total: int, requested: int) -> dict[str, Any]:
        """Cut ``result[key]`` to the byte bound; say ``returned_<key>`` and ``truncated``."""
        items: list[Any] = result[key]
        envelope = {**result, key: [], f"returned_{key}": len(items), "truncated": True}
        room = self.max_bytes - json_size(envelope) - 16
        kept = items[: rows_that_fit(items, room)] if room > 2 else []
        result[key] = kept
        result[f"returned_{key}"] = len(kept)
        result["truncated"] = len(kept) < requested
        if key != "rows":
            result[f"total_{key}"] = total
        return result


def _index_says_something(frame: pandas.DataFrame) -> bool:
    index = frame.index
    return not (isinstance(index, pandas.RangeIndex) and index.start == 0 and index.step == 1)


def _check_aggregation(series: pandas.Series, column: str, agg: str) -> None:
    if agg not in AGGREGATIONS:
        raise InvalidInput(f"agg {agg!r} is not one of {', '.join(AGGREGATIONS)}")
    dtype = series.dtype
    numeric = pandas_types.is_numeric_dtype(dtype) or pandas_types.is_bool_dtype(dtype)
    if isinstance(dtype, pandas.CategoricalDtype):
        numeric = False
    if agg == "sum" and not numeric:
        raise InvalidInput(f"sum needs a column of numbers; {column!r} holds {dtype}")
    if agg in ("mean", "median") and not (numeric or pandas_types.is_datetime64_any_dtype(dtype)):
        raise InvalidInput(f"{agg} needs a column of numbers or dates; {column!r} holds {dtype}")


def _cut_text(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[:MAX_CELL_CHARS] + "…"
    return value


def _cut_cells(records: list[dict[str, Any]]) -> bool:
    cut = False
    for record in records:
        for key, value in record.items():
            if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
                record[key] = value[:MAX_CELL_CHARS] + "…"
                cut = True
    return cut
