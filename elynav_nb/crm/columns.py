"""CRM column types: the Arrow type of every CRM column and the pandas dtypes they become. Pure (no I/O).

Where it sits: ``reader.py`` reads a table from SQLite as an Arrow table and hands it to
``arrow_to_frame``; ``Crm.call`` hands the frames that came through MCP to ``apply_crm_dtypes``,
which converts them to Arrow and takes the same road, so both paths give the same dtypes:

- ids (``id``, ``account_id``, ``contact_id``) -> ``int64`` (missing values allowed: a note has no contact);
- ``created_at``, ``updated_at``, ``occurred_at`` -> ``timestamp[us, tz=UTC]``, parsed from SQLite's
  ISO 8601 text; ``close_date`` -> ``timestamp[us]`` (a calendar date, at midnight);
- ``kind``, ``status`` -> pandas ``category``; ``stage`` and ``size`` -> ordered ``category``, with the
  fixed lists of ``domain`` as categories (a value outside the list becomes missing);
- ``amount`` -> ``double``; every other CRM column is text -> ``string``.

``dtype_backend="pyarrow"`` (the default) keeps the Arrow columns as they are: ``pandas.ArrowDtype``
(``int64[pyarrow]``, ``string[pyarrow]``, ``timestamp[us, tz=UTC][pyarrow]``, ``double[pyarrow]``),
no copy. ``dtype_backend="numpy_nullable"`` gives NumPy-backed nullable dtypes instead (``Int64``,
``string``, ``datetime64[us, UTC]``, ``Float64``), as pandas' own ``dtype_backend`` does.
``with_numpy_dtypes`` does that for a frame you already hold (pandas 3.1's
``convert_dtypes(dtype_backend="numpy_nullable")`` raises ``KeyError`` on Arrow timestamp columns).

Why categories stay pandas ``category`` rather than Arrow ``dictionary`` (same memory: int8 codes
plus a short list): a ``dictionary[pyarrow]`` column loses the order of ``stage`` (groupby lists
stages alphabetically, ``sort_values`` raises ``ArrowNotImplementedError``, ``>`` compares text) and
``groupby(observed=False)`` does not list the stages nobody reached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeAlias

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api.extensions import ExtensionDtype

from elynav_nb.crm.domain import ACCOUNT_SIZES, ACCOUNT_STATUSES, ACTIVITY_KINDS, OPPORTUNITY_STAGES
from elynav_nb.errors import InvalidInput

__all__ = [
    "CATEGORY_COLUMNS",
    "COLUMN_TYPES",
    "DtypeBackend",
    "apply_crm_dtypes",
    "arrow_to_frame",
    "crm_arrow_table",
    "validate_dtype_backend",
    "with_numpy_dtypes",
]

DtypeBackend = Literal["pyarrow", "numpy_nullable"]

UTC_TIMESTAMP = pa.timestamp("us", tz="UTC")
CALENDAR_DATE = pa.timestamp("us")
_CATEGORY_CODES = pa.dictionary(pa.int8(), pa.string())

CATEGORY_COLUMNS: dict[str, tuple[tuple[str, ...], bool]] = {
    "kind": (ACTIVITY_KINDS, False),
    "status": (ACCOUNT_STATUSES, False),
    "stage": (OPPORTUNITY_STAGES, True),
    "size": (ACCOUNT_SIZES, True),
}
"""Category columns: their allowed values, in order, and whether that order means something."""

_TEXT_COLUMNS = (
    "name",
    "domain",
    "industry",
    "country",
    "owner",
    "first_name",
    "last_name",
    "email",
    "title",
    "phone",
    "subject",
    "body",
    "logged_by",
)

COLUMN_TYPES: dict[str, pa.DataType] = {
    "id": pa.int64(),
    "account_id": pa.int64(),
    "contact_id": pa.int64(),
    "created_at": UTC_TIMESTAMP,
    "updated_at": UTC_TIMESTAMP,
    "occurred_at": UTC_TIMESTAMP,
    "close_date": CALENDAR_DATE,
    "amount": pa.float64(),
    **{column: _CATEGORY_CODES for column in CATEGORY_COLUMNS},
    **{column: pa.string() for column in _TEXT_COLUMNS},
}
"""The Arrow type of every column of the CRM tables (category columns: int8 codes into their list)."""

ArrowColumn: TypeAlias = "pa.Array[Any] | pa.ChunkedArray[Any]"


def _as_text(column_name: str, values: ArrowColumn) -> ArrowColumn:
    """``values`` as Arrow strings; an all-missing column of another type becomes missing text.

    SQLite columns have no fixed type: a reader that guesses types from the first rows sees
    ``int64`` (or ``null``) for a text column that starts with NULLs.
    """
    if pa.types.is_string(values.type):
        return values
    if values.null_count == len(values):
        return _missing(len(values), pa.string())
    try:
        return pc.cast(values, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InvalidInput(f"column {column_name} holds {values.type} values, not text") from None


def _missing(length: int, target: pa.DataType) -> ArrowColumn:
    """``length`` missing values of type ``target``."""
    make_nulls: Any = pa.nulls
    column: ArrowColumn = make_nulls(length, target)
    return column


def _timestamps(column_name: str, values: ArrowColumn, target: pa.TimestampType[Any, Any]) -> ArrowColumn:
    """ISO 8601 text (or timestamps) as ``target``: Arrow's parser first, pandas' for the other ISO forms."""
    if isinstance(values.type, pa.TimestampType):
        if values.type.tz is None and target.tz is not None:
            assume_timezone: Any = pc.assume_timezone
            localized: ArrowColumn = assume_timezone(values, target.tz)
            return pc.cast(localized, target)
        return pc.cast(values, target)
    text = _as_text(column_name, values)
    try:
        return pc.cast(text, target)
    except pa.ArrowInvalid:
        pass  # e.g. '2025-03-14T09:30:00' without a zone, taken as UTC below as pandas does
    try:
        if target.tz is None:
            parsed = pd.to_datetime(text.to_pandas(), format="ISO8601")
        else:
            parsed = pd.to_datetime(text.to_pandas(), format="ISO8601", utc=True)
    except (ValueError, TypeError):
        raise InvalidInput(
            f"column {column_name} holds a value that is not an ISO 8601 date-time (e.g. 2025-03-14T09:30:00Z)"
        ) from None
    column: ArrowColumn = pa.array(parsed, type=target, from_pandas=True)
    return column


def _categories(column_name: str, values: ArrowColumn) -> ArrowColumn:
    """Text as int8 codes into the column's fixed list (a value outside the list becomes missing)."""
    allowed, ordered = CATEGORY_COLUMNS[column_name]
    dictionary = pa.array(list(allowed), type=pa.string())
    if pa.types.is_dictionary(values.type):
        values = pc.cast(values, pa.string())
    codes = pc.cast(pc.index_in(_as_text(column_name, values), value_set=dictionary), pa.int8())
    chunks = codes.chunks if isinstance(codes, pa.ChunkedArray) else [codes]
    encoded = [pa.DictionaryArray.from_arrays(chunk, dictionary, ordered=ordered) for chunk in chunks]
    make_chunked_array: Any = pa.chunked_array
    column: ArrowColumn = make_chunked_array(encoded, type=_category_type(ordered))
    return column


def _category_type(ordered: bool) -> pa.DataType:
    if ordered:
        return pa.dictionary(pa.int8(), pa.string(), ordered=True)
    return pa.dictionary(pa.int8(), pa.string())


def _numbers(column_name: str, values: ArrowColumn, target: pa.DataType) -> ArrowColumn:
    if values.null_count == len(values):
        return _missing(len(values), target)
    try:
        return pc.cast(values, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InvalidInput(f"column {column_name} holds {values.type} values, not {target}") from None


def _crm_column(column_name: str, values: ArrowColumn) -> ArrowColumn:
    target = COLUMN_TYPES[column_name]
    if column_name in CATEGORY_COLUMNS:
        return _categories(column_name, values)
    if isinstance(target, pa.TimestampType):
        return _timestamps(column_name, values, target)
    if pa.types.is_string(target):
        return _as_text(column_name, values)
    return _numbers(column_name, values, target)


def crm_arrow_table(table: pa.Table) -> pa.Table:
    """``table`` with every CRM column cast to its CRM type (other columns untouched)."""
    columns: list[ArrowColumn] = []
    for column_name, values in zip(table.column_names, table.columns, strict=True):
        columns.append(_crm_column(column_name, values) if column_name in COLUMN_TYPES else values)
    return pa.table(columns, names=table.column_names)


_NUMPY_NULLABLE_DTYPES: dict[pa.DataType, ExtensionDtype] = {
    pa.int8(): pd.Int8Dtype(),
    pa.int16(): pd.Int16Dtype(),
    pa.int32(): pd.Int32Dtype(),
    pa.int64(): pd.Int64Dtype(),
    pa.uint8(): pd.UInt8Dtype(),
    pa.uint16(): pd.UInt16Dtype(),
    pa.uint32(): pd.UInt32Dtype(),
    pa.uint64(): pd.UInt64Dtype(),
    pa.bool_(): pd.BooleanDtype(),
    pa.float32(): pd.Float32Dtype(),
    pa.float64(): pd.Float64Dtype(),
    pa.string(): pd.StringDtype(),
    pa.large_string(): pd.StringDtype(),
}


def _pyarrow_dtype(arrow_type: pa.DataType) -> pd.ArrowDtype | None:
    if pa.types.is_dictionary(arrow_type):
        return None  # pyarrow turns a dictionary column into a pandas Categorical
    return pd.ArrowDtype(arrow_type)


def validate_dtype_backend(dtype_backend: object) -> DtypeBackend:
    """``"pyarrow"`` or ``"numpy_nullable"``; anything else is ``InvalidInput``."""
    if dtype_backend == "pyarrow":
        return "pyarrow"
    if dtype_backend == "numpy_nullable":
        return "numpy_nullable"
    raise InvalidInput(f"dtype_backend {dtype_backend!r} is unknown; use 'pyarrow' or 'numpy_nullable'")


def _types_mapper(dtype_backend: DtypeBackend) -> Callable[[pa.DataType], ExtensionDtype | None]:
    if validate_dtype_backend(dtype_backend) == "pyarrow":
        return _pyarrow_dtype
    return _NUMPY_NULLABLE_DTYPES.get  # timestamps: datetime64[us, tz] without a mapper


def arrow_to_frame(table: pa.Table, dtype_backend: DtypeBackend = "pyarrow") -> pd.DataFrame:
    """A DataFrame of ``table`` with CRM dtypes (``crm_arrow_table`` applied first)."""
    mapper = _types_mapper(dtype_backend)
    return crm_arrow_table(table).to_pandas(types_mapper=mapper)


def _arrow_column(series: pd.Series) -> ArrowColumn | None:
    """The Arrow array of a pandas column, or ``None`` when Arrow cannot hold it (mixed objects)."""
    try:
        values: ArrowColumn = pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    return values


def apply_crm_dtypes(frame: pd.DataFrame, dtype_backend: DtypeBackend = "pyarrow") -> pd.DataFrame:
    """A copy of ``frame`` with the CRM dtypes; columns Arrow cannot hold (mixed objects) are kept as they are.

    Other columns get the Arrow type of their values. The index is reset; ``attrs`` are kept.
    """
    mapper = _types_mapper(dtype_backend)
    kept: dict[str, pd.Series] = {}
    arrow_columns: list[ArrowColumn] = []
    arrow_names: list[str] = []
    for column_name in frame.columns:
        series = frame[column_name].reset_index(drop=True)
        values = _arrow_column(series)
        if values is None:
            kept[str(column_name)] = series
            continue
        arrow_columns.append(_crm_column(str(column_name), values) if column_name in COLUMN_TYPES else values)
        arrow_names.append(str(column_name))
    converted = pa.table(arrow_columns, names=arrow_names).to_pandas(types_mapper=mapper)
    for column_name, series in kept.items():
        converted[column_name] = series
    converted = converted.loc[:, [str(column_name) for column_name in frame.columns]]
    converted.attrs.update(frame.attrs)
    return converted


def with_numpy_dtypes(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose Arrow-backed columns have NumPy-backed nullable dtypes.

    ``int64[pyarrow]`` -> ``Int64``, ``string[pyarrow]`` -> ``string``, ``double[pyarrow]`` ->
    ``Float64``, ``timestamp[us, tz=UTC][pyarrow]`` -> ``datetime64[us, UTC]``; other columns
    (``category``, NumPy dtypes) are kept. The index and ``attrs`` are kept.
    """
    converted = frame.copy()
    for column_name in frame.columns:
        if isinstance(frame[column_name].dtype, pd.ArrowDtype):
            values = pa.array(frame[column_name].array)  # the Arrow data itself, no copy
            series = values.to_pandas(types_mapper=_NUMPY_NULLABLE_DTYPES.get)
            converted[column_name] = series.set_axis(frame.index)
    return converted
