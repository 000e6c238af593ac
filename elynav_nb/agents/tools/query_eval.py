"""Evaluate a checked query plan (``query_rules``) on a DataFrame: a boolean row mask, read-only.

Where it sits: ``frame_tools``' ``<name>_query`` tool calls ``compile_query`` then ``evaluate_mask``
on the frame as it is at that moment. Each plan node maps to one pandas operation on whole columns
(``Series`` comparisons, ``isin``, ``str.contains(regex=False)``, ``dt.year``...); the frame is never
copied or changed and no Python object is reached by name.

Meanings that differ from bare pandas, on purpose:

- a text literal compared with a date/time column (numpy or Arrow ``timestamp`` / ``date32``) is read
  as a date (``date >= '2024-01-01'`` works on Arrow-backed frames too);
- arithmetic is refused on a column that is not numbers, booleans, dates or durations (``s * 10**6`` on
  a text column would build gigabytes);
- a missing value in the final mask counts as "no" (Arrow and nullable booleans carry ``<NA>``).
"""

from __future__ import annotations

import datetime
import operator
from collections.abc import Callable
from typing import Any

import numpy
import pandas
from pandas.api import types as pandas_types

from elynav_nb.agents.tools.query_rules import (
    Arithmetic,
    BooleanOperation,
    Column,
    Comparison,
    DateField,
    IndexValues,
    Membership,
    MethodCall,
    Negation,
    QueryNode,
    Value,
)
from elynav_nb.errors import InvalidInput

__all__ = ["evaluate_mask"]

_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
}


def evaluate_mask(plan: QueryNode, frame: pandas.DataFrame) -> numpy.ndarray[Any, numpy.dtype[numpy.bool_]]:
    """One boolean per row of ``frame``: True where the plan holds. ``InvalidInput`` when it is no condition."""
    value = _Evaluator(frame).evaluate(plan)
    if isinstance(value, (bool, numpy.bool_)):
        return numpy.full(len(frame), bool(value), dtype=bool)
    if not isinstance(value, pandas.Series):
        raise InvalidInput(
            f"the query must be a condition (true or false per row), not a {type(value).__name__}"
        )
    if not _is_boolean(value.dtype):
        raise InvalidInput(
            f"the query must be a condition (true or false per row); it gives {value.dtype} values:"
            " compare them (==, >, in [...])"
        )
    if value.dtype != numpy.bool_:
        value = value.fillna(False).astype(bool)
    mask: numpy.ndarray[Any, numpy.dtype[numpy.bool_]] = value.to_numpy(dtype=bool)
    return mask


def _is_boolean(dtype: Any) -> bool:
    return bool(pandas_types.is_bool_dtype(dtype))


class _Evaluator:
    def __init__(self, frame: pandas.DataFrame) -> None:
        self.frame = frame

    def evaluate(self, node: QueryNode) -> Any:
        if isinstance(node, Column):
            return self.frame[node.label]
        if isinstance(node, IndexValues):
            return pandas.Series(self.frame.index, index=self.frame.index)
        if isinstance(node, Value):
            return node.value
        if isinstance(node, BooleanOperation):
            return self.boolean(node)
        if isinstance(node, Negation):
            return self.negation(node)
        if isinstance(node, Comparison):
            return self.comparison(node)
        if isinstance(node, Membership):
            return self.membership(node)
        if isinstance(node, Arithmetic):
            return self.arithmetic(node)
        if isinstance(node, MethodCall):
            return self.method(node)
        if isinstance(node, DateField):
            return self.date_field(node)
        raise InvalidInput(f"unknown query node {type(node).__name__}")  # unreachable: plans are closed

    def boolean(self, node: BooleanOperation) -> Any:
        result = self.evaluate(node.operands[0])
        for operand in node.operands[1:]:
            value = self.evaluate(operand)
            if not isinstance(result, pandas.Series) and not isinstance(value, pandas.Series):
                result = (
                    (bool(result) and bool(value))
                    if node.operator == "and"
                    else (bool(result) or bool(value))
                )
            elif node.operator == "and":
                result = _as_condition(result) & _as_condition(value)
            else:
                result = _as_condition(result) | _as_condition(value)
        return result

    def negation(self, node: Negation) -> Any:
        value = self.evaluate(node.operand)
        if node.kind == "not":
            return ~_as_condition(value) if isinstance(value, pandas.Series) else not value
        if isinstance(value, pandas.Series):
            _check_arithmetic_column(value)
        return -value if node.kind == "minus" else +value

    def comparison(self, node: Comparison) -> Any:
        left, right = self.evaluate(node.left), self.evaluate(node.right)
        if isinstance(left, pandas.Series):
            right = _as_column_literal(left, right)
        elif isinstance(right, pandas.Series):
            left = _as_column_literal(right, left)
        return _COMPARE[node.operator](left, right)

    def membership(self, node: Membership) -> Any:
        operand = self.evaluate(node.operand)
        if isinstance(operand, pandas.Series):
            values = [_as_column_literal(operand, value) for value in node.values]
            found = operand.isin(values)
            return ~found if node.negated else found
        found_scalar = operand in node.values
        return not found_scalar if node.negated else found_scalar

    def arithmetic(self, node: Arithmetic) -> Any:
        left, right = self.evaluate(node.left), self.evaluate(node.right)
        for side in (left, right):
            if isinstance(side, pandas.Series):
                _check_arithmetic_column(side)
            elif isinstance(side, str) or side is None:
                raise InvalidInput("arithmetic needs numbers, not text or None")
        if (
            node.operator == "**"
            and not isinstance(left, pandas.Series)
            and not isinstance(right, pandas.Series)
        ):
            return float(left) ** float(right)  # floats: 9 ** 9 ** 9 overflows at once instead of running on
        return _ARITHMETIC[node.operator](left, right)

    def method(self, node: MethodCall) -> Any:
        target = self.evaluate(node.target)
        if not isinstance(target, pandas.Series):
            raise InvalidInput(f".{node.method}() applies to a column")
        keywords = dict(node.keywords)
        if node.accessor == "str":
            if not _is_text(target.dtype):
                raise InvalidInput(f".str.{node.method}() needs a text column, not {target.dtype}")
            strings = target.str
            if node.method == "contains":
                return strings.contains(node.arguments[0], case=bool(keywords.get("case", True)), regex=False)
            if node.method in ("startswith", "endswith"):
                return getattr(strings, node.method)(node.arguments[0])
            return getattr(strings, node.method)()
        if node.method == "between":
            low, high = (_as_column_literal(target, value) for value in node.arguments)
            return target.between(low, high, inclusive=keywords.get("inclusive", "both"))
        return getattr(target, node.method)()  # isna / notna / isnull / notnull: no arguments

    def date_field(self, node: DateField) -> Any:
        target = self.evaluate(node.target)
        if not isinstance(target, pandas.Series) or _date_kind(target.dtype) is None:
            shown = target.dtype if isinstance(target, pandas.Series) else type(target).__name__
            raise InvalidInput(f".dt.{node.field} needs a date or time column, not {shown}")
        return getattr(target.dt, node.field)


def _as_condition(value: Any) -> Any:
    if isinstance(value, pandas.Series) and not _is_boolean(value.dtype):
        raise InvalidInput(f"and / or / not need conditions, not {value.dtype} values: compare them first")
    return value


def _check_arithmetic_column(series: pandas.Series) -> None:
    dtype = series.dtype
    if _is_text(dtype) or not (
        pandas_types.is_numeric_dtype(dtype)
        or pandas_types.is_bool_dtype(dtype)
        or _date_kind(dtype) is not None
        or pandas_types.is_timedelta64_dtype(dtype)
    ):
        raise InvalidInput(f"arithmetic on column {series.name!r} of type {dtype} is not allowed")


def _is_text(dtype: Any) -> bool:
    if isinstance(dtype, pandas.CategoricalDtype):
        return _is_text(dtype.categories.dtype)
    if isinstance(dtype, pandas.ArrowDtype):
        import pyarrow

        arrow_type = dtype.pyarrow_dtype
        return bool(pyarrow.types.is_string(arrow_type) or pyarrow.types.is_large_string(arrow_type))
    return bool(pandas_types.is_string_dtype(dtype) or pandas_types.is_object_dtype(dtype))


def _date_kind(dtype: Any) -> str | None:
    """``"timestamp"``, ``"date"`` or None: how a text literal compared with this column is read."""
    if isinstance(dtype, pandas.ArrowDtype):
        import pyarrow

        arrow_type = dtype.pyarrow_dtype
        if pyarrow.types.is_timestamp(arrow_type):
            return "timestamp"
        if pyarrow.types.is_date(arrow_type):
            return "date"
        return None
    if pandas_types.is_datetime64_any_dtype(dtype):
        return "timestamp"
    return None


def _as_column_literal(column: pandas.Series, value: Any) -> Any:
    """A text literal compared with a date column, read as that column's kind of date; others unchanged."""
    if not isinstance(value, str):
        return value
    kind = _date_kind(column.dtype)
    if kind is None:
        return value
    try:
        moment = pandas.Timestamp(value)
    except (ValueError, TypeError):
        raise InvalidInput(f"{value!r} is not a date, and column {column.name!r} holds dates") from None
    if kind == "date":
        return datetime.date(moment.year, moment.month, moment.day)
    timezone = getattr(column.dtype, "tz", None)
    if timezone is None and isinstance(column.dtype, pandas.ArrowDtype):
        timezone = getattr(column.dtype.pyarrow_dtype, "tz", None)
    if timezone is not None and moment.tzinfo is None:
        return moment.tz_localize(timezone)
    return moment
