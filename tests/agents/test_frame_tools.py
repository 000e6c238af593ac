"""df_tools: a DataFrame read by an agent (numpy- and Arrow-backed), the safe query subset, bounds, live reads."""

from __future__ import annotations

import datetime
from typing import Any

import numpy
import pandas
import pyarrow
import pytest

from elynav_nb.agents.tools import KernelToolSet, ToolOutcome, df_tools, kernel_tools
from elynav_nb.agents.tools.query_rules import compile_query
from elynav_nb.errors import InvalidInput


def numpy_frame() -> pandas.DataFrame:
    return pandas.DataFrame(
        {
            "account_id": [1, 2, 3, 4, 5, 6],
            "name": ["Acme", "Globex", "Initech", "Umbrella", "Hooli", None],
            "kind": pandas.Categorical(["call", "email", "call", "meeting", "email", "call"]),
            "amount": [10.0, 250.5, numpy.nan, 40.0, 99.9, 5.0],
            "date": pandas.to_datetime(
                pandas.Series(["2024-01-05", "2024-02-10", "2024-02-11", "2024-03-01", "2024-03-15", None])
            ),
            "first name": ["Ada", "Bob", "Cy", "Di", "Ed", "Flo"],
        }
    )


def arrow_frame() -> pandas.DataFrame:
    frame = numpy_frame().convert_dtypes(dtype_backend="pyarrow")
    frame["day"] = pandas.Series(
        [datetime.date(2024, 1, day) for day in range(1, 6)] + [None],
        dtype=pandas.ArrowDtype(pyarrow.date32()),
    )
    return frame


FRAMES = pytest.mark.parametrize("make_frame", [numpy_frame, arrow_frame], ids=["numpy", "arrow"])


async def call(tools: KernelToolSet, name: str, **arguments: Any) -> ToolOutcome:
    return await tools.call(name, arguments)


def test_the_set_has_six_named_tools_with_descriptions() -> None:
    tools = df_tools(numpy_frame(), name="activities")
    assert tools.names == [
        "activities_describe",
        "activities_head",
        "activities_sample",
        "activities_query",
        "activities_value_counts",
        "activities_groupby_agg",
    ]
    assert all("activities table" in tool.description for tool in tools)
    assert "pandas query syntax" in tools["activities_query"].description
    agg = tools["activities_groupby_agg"].parameters["properties"]["agg"]
    assert agg["enum"] == ["count", "sum", "mean", "min", "max", "median", "nunique"]
    assert tools["activities_head"].parameters["properties"]["n"]["minimum"] == 1


def test_df_tools_checks_its_arguments() -> None:
    with pytest.raises(InvalidInput):
        df_tools([1, 2])  # type: ignore[arg-type]
    for bad_name in ("bad name", "x\n", "1x", "a" * 42):
        with pytest.raises(InvalidInput):
            df_tools(numpy_frame(), name=bad_name)
    with pytest.raises(InvalidInput):
        df_tools(numpy_frame(), max_rows=0)
    with pytest.raises(InvalidInput, match="'accounts_describe'"):
        kernel_tools(df_tools(numpy_frame()), df_tools(numpy_frame()))


@pytest.mark.anyio
@FRAMES
async def test_describe(make_frame: Any) -> None:
    frame = make_frame()
    outcome = await call(df_tools(frame), "accounts_describe")
    assert not outcome.is_error, outcome.content
    described = outcome.structured
    assert described["row_count"] == 6 and described["table"] == "accounts"
    columns = {column["name"]: column for column in described["columns"]}
    assert columns["amount"]["non_null"] == 5 and columns["name"]["example"] == "Acme"
    assert columns["date"]["example"] == "2024-01-05T00:00:00"
    assert columns["amount"]["dtype"] == str(frame["amount"].dtype)


@pytest.mark.anyio
@FRAMES
async def test_head_and_sample_are_bounded(make_frame: Any) -> None:
    tools = df_tools(make_frame(), max_rows=3)
    head = await call(tools, "accounts_head", n=2, columns=["account_id", "name"])
    assert head.structured["rows"] == [{"account_id": 1, "name": "Acme"}, {"account_id": 2, "name": "Globex"}]
    assert head.structured["truncated"] is False and head.structured["total_rows"] == 6
    head = await call(tools, "accounts_head", n=100)
    assert head.structured["returned_rows"] == 3 and head.structured["truncated"] is True
    sample = await call(tools, "accounts_sample", n=2, seed=7)
    again = await call(tools, "accounts_sample", n=2, seed=7)
    assert sample.structured["rows"] == again.structured["rows"] and len(sample.structured["rows"]) == 2
    refused = await call(tools, "accounts_head", n=0)
    assert refused.is_error and refused.code == "INVALID_INPUT" and "'n'" in refused.content
    unknown = await call(tools, "accounts_head", columns=["nope"])
    assert unknown.is_error and "'nope' is not a column" in unknown.content


@pytest.mark.anyio
@FRAMES
async def test_query_filters_rows(make_frame: Any) -> None:
    tools = df_tools(make_frame())

    async def ids(expression: str) -> list[int]:
        outcome = await call(tools, "accounts_query", expression=expression, columns=["account_id"])
        assert not outcome.is_error, (expression, outcome.content)
        return [row["account_id"] for row in outcome.structured["rows"]]

    assert await ids("amount > 50") == [2, 5]
    assert await ids("amount > 50 & kind == 'email'") == [2, 5]
    assert await ids("kind == 'call' and not account_id > 3") == [1, 3]
    assert await ids("~(amount > 6) & amount.notna()") == [6]
    assert await ids("kind in ['meeting', 'email']") == [2, 4, 5]
    assert await ids("kind not in ('call',)") == [2, 4, 5]
    assert await ids("kind == ['meeting']") == [4]
    assert await ids("date >= '2024-02-11' | amount < 6") == [3, 4, 5, 6]
    assert await ids("name.str.contains('o', case=False)") == [2, 5]
    assert await ids("name.str.lower().str.startswith('u')") == [4]
    assert await ids("name.isna()") == [6]
    assert await ids("amount.between(10, 40)") == [1, 4]
    assert await ids("date.dt.month == 3") == [4, 5]
    assert await ids("(amount * 2 + 1) // 1 == 21") == [1]
    assert await ids("-amount < -99") == [2, 5]
    assert await ids("1 < account_id < 4") == [2, 3]
    assert await ids("`first name` == 'Cy'") == [3]
    assert await ids("index >= 4") == [5, 6]
    assert await ids("True") == [1, 2, 3, 4, 5, 6]


@pytest.mark.anyio
async def test_query_on_arrow_dates_reads_text_as_dates() -> None:
    tools = df_tools(arrow_frame())
    outcome = await call(
        tools, "accounts_query", expression="day >= '2024-01-04'", columns=["account_id", "day"]
    )
    assert outcome.structured["rows"] == [
        {"account_id": 4, "day": "2024-01-04"},
        {"account_id": 5, "day": "2024-01-05"},
    ]


@pytest.mark.anyio
async def test_query_results_are_bounded_and_say_the_total() -> None:
    frame = pandas.DataFrame({"value": numpy.arange(10_000), "text": ["x" * 200] * 10_000})
    tools = df_tools(frame, max_rows=50, max_bytes=4096)
    outcome = await call(tools, "accounts_query", expression="value % 2 == 0")
    result = outcome.structured
    assert result["truncated"] is True and result["total_rows"] == 5000 and result["table_rows"] == 10_000
    assert 0 < result["returned_rows"] == len(result["rows"]) < 50
    assert len(outcome.content.encode()) <= 4096

    long_cells = pandas.DataFrame({"text": ["y" * 5000]})
    outcome = await call(df_tools(long_cells), "accounts_head", n=1)
    assert (
        outcome.structured["cells_cut_to_chars"] == 1000
        and len(outcome.structured["rows"][0]["text"]) == 1001
    )


REFUSED = [
    ("@x > 1", "'@'"),
    ("amount > @limit", "'@'"),
    ("a.__class__", "double underscore"),
    ("amount.__class__", "double underscore"),
    ("__import__('os').system('x')", "double underscore"),
    ("`amount`.__class__", "double underscore"),
    ("`__import__('os')` > 1", "is not a column"),
    ("amount.values.tolist()", ".tolist"),
    ("amount.values > 1", "attribute access (.values)"),
    ("name.str.contains('a', regex=True)", "regex"),
    ("name.str.match('(a+)+$')", ".str.match"),
    ("amount.apply(print)", ".apply"),
    ("open('/etc/passwd')", "calling open"),
    ("amount[0] > 1", "indexing"),
    ("(lambda: 1)()", "calling"),
    ("[x for x in amount]", "comprehension"),
    ("f'{amount}' == 'x'", "f-string"),
    ("amount if True else 1", "conditional"),
    ("(y := 1)", "walrus"),
    ("'x' * 1000000000 == name", "string literal"),
    ("amount is None", "is / is not"),
    ("b'x' == name", "bytes"),
    ("amount > 1; import os", "not a valid expression"),
    ("", "empty"),
    ("a" * 3000, "longer than"),
    ("amount == " + "+".join(["1"] * 200), "more than"),
    ("nope > 1", "'nope' is not a column"),
    ("amount in [amount]", "literals only"),
]


@pytest.mark.parametrize(("expression", "reason"), REFUSED)
def test_query_rules_refuse_what_reaches_python(expression: str, reason: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        compile_query(expression, ["amount", "name", "a"])
    assert reason in str(caught.value), str(caught.value)


@pytest.mark.anyio
async def test_query_refusals_are_tool_errors_before_anything_runs() -> None:
    frame = numpy_frame()
    tools = df_tools(frame)
    for expression in ("@x > 1", "amount.__class__", "__import__('os').system('x')", "`amount`.__class__"):
        outcome = await call(tools, "accounts_query", expression=expression)
        assert outcome.is_error and outcome.code == "INVALID_INPUT" and "query refused" in outcome.content
    outcome = await call(tools, "accounts_query", expression="amount.values.tolist()")
    assert outcome.is_error and ".tolist" in outcome.content


@pytest.mark.anyio
async def test_query_evaluation_errors_are_plain_tool_errors() -> None:
    tools = df_tools(numpy_frame())
    for expression, words in [
        ("amount + 1", "must be a condition"),
        ("name * 1000000 == 'x'", "arithmetic on column 'name'"),
        ("date >= 'not a date'", "is not a date"),
        ("amount.str.contains('x')", "needs a text column"),
        ("amount and kind == 'call'", "need conditions"),
    ]:
        outcome = await call(tools, "accounts_query", expression=expression)
        assert outcome.is_error and outcome.code == "INVALID_INPUT", (expression, outcome.content)
        assert words in outcome.content, (expression, outcome.content)


@pytest.mark.anyio
@FRAMES
async def test_value_counts_and_groupby_agg(make_frame: Any) -> None:
    tools = df_tools(make_frame(), max_rows=2)
    counts = await call(tools, "accounts_value_counts", column="kind", n=5)
    assert counts.structured["values"] == [{"value": "call", "count": 3}, {"value": "email", "count": 2}]
    assert counts.structured["distinct_values"] == 3 and counts.structured["truncated"] is True

    totals = await call(
        tools, "accounts_groupby_agg", by="kind", column="amount", agg="sum", order="largest_first"
    )
    assert totals.structured["groups"] == [
        {"kind": "email", "amount_sum": pytest.approx(350.4)},
        {"kind": "meeting", "amount_sum": 40.0},
    ]
    assert totals.structured["total_groups"] == 3 and totals.structured["truncated"] is True

    latest = await call(tools, "accounts_groupby_agg", by=["kind"], column="date", agg="max")
    assert latest.structured["groups"][0] == {"kind": "call", "date_max": "2024-02-11T00:00:00"}

    refused = await call(tools, "accounts_groupby_agg", by="kind", column="name", agg="sum")
    assert refused.is_error and "sum needs a column of numbers" in refused.content
    refused = await call(tools, "accounts_groupby_agg", by="kind", column="amount", agg="std")
    assert refused.is_error and "'agg'" in refused.content


@pytest.mark.anyio
@FRAMES
async def test_the_tools_read_the_frame_as_it_is_now(make_frame: Any) -> None:
    frame = make_frame()
    tools = df_tools(frame)
    before = await call(tools, "accounts_query", expression="amount > 1000")
    assert before.structured["total_rows"] == 0
    frame.loc[0, "amount"] = 5000.0
    frame["score"] = range(len(frame))
    after = await call(
        tools, "accounts_query", expression="amount > 1000 and score == 0", columns=["account_id"]
    )
    assert after.structured["rows"] == [{"account_id": 1}]
    described = await call(tools, "accounts_describe")
    assert "score" in [column["name"] for column in described.structured["columns"]]


@pytest.mark.anyio
async def test_a_frame_with_a_real_index_shows_it_in_rows() -> None:
    frame = numpy_frame().set_index("account_id")
    outcome = await call(df_tools(frame), "accounts_query", expression="index == 3", columns=["name"])
    assert outcome.structured["rows"] == [{"account_id": 3, "name": "Initech"}]


@pytest.mark.anyio
async def test_the_tools_never_change_the_frame() -> None:
    frame = numpy_frame()
    copy = frame.copy(deep=True)
    tools = df_tools(frame)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("accounts_describe", {}),
        ("accounts_head", {"n": 3}),
        ("accounts_sample", {"n": 3, "seed": 1}),
        ("accounts_query", {"expression": "name.str.upper() == 'ACME'"}),
        ("accounts_value_counts", {"column": "kind"}),
        ("accounts_groupby_agg", {"by": ["kind", "name"], "column": "amount", "agg": "mean"}),
    ]
    for name, arguments in calls:
        outcome = await tools.call(name, arguments)
        assert not outcome.is_error, (name, outcome.content)
    pandas.testing.assert_frame_equal(frame, copy)
