"""Kernel tools: schema from hints and docstrings, strict arguments, bounded calls, JSON results, tool sets."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import decimal
import enum
import functools
import threading
import time
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import numpy
import pandas
import pytest
from pydantic import Field

from elynav_nb.agents.tools import KernelTool, KernelToolSet, ToolOutcome, agent_tool, kernel_tools
from elynav_nb.agents.tools.docstrings import read_docstring
from elynav_nb.errors import InvalidInput, NotFound

# -- schema ------------------------------------------------------------------------------------------


@agent_tool
def search_accounts(
    query: str,
    limit: int = 10,
    min_score: float = 0.5,
    active_only: bool = True,
    tags: list[str] | None = None,
    region: Optional[str] = None,
    sort: Literal["name", "score"] = "name",
) -> list[str]:
    """Search the accounts by name.

    A second paragraph that is not part of the description.

    Args:
        query (str): text to look for in the account name.
        limit: how many accounts at most,
            a continued line.
        min_score: the lowest score kept.
        active_only: skip closed accounts.
        tags: only accounts with one of these tags.
        region: one region, or all.
        sort: the order of the answer.

    Returns:
        The account names.
    """
    return [query] * limit


def test_schema_comes_from_the_hints_and_the_google_docstring() -> None:
    assert isinstance(search_accounts, KernelTool)
    assert search_accounts.name == "search_accounts"
    assert search_accounts.description == "Search the accounts by name."
    schema = search_accounts.parameters
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["query"]
    properties = schema["properties"]
    assert properties["query"] == {"type": "string", "description": "text to look for in the account name."}
    assert properties["limit"] == {
        "type": "integer",
        "default": 10,
        "description": "how many accounts at most, a continued line.",
    }
    assert properties["min_score"]["type"] == "number" and properties["min_score"]["default"] == 0.5
    assert properties["active_only"] == {
        "type": "boolean",
        "default": True,
        "description": "skip closed accounts.",
    }
    assert properties["tags"]["anyOf"] == [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
    assert properties["region"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert properties["sort"]["enum"] == ["name", "score"] and properties["sort"]["default"] == "name"
    assert "title" not in schema and all("title" not in item for item in properties.values())


def test_numpy_docstring_async_function_and_overrides() -> None:
    @agent_tool(name="count-things", description="Count what matters.")
    async def count(items: list[int], threshold: Annotated[int, Field(ge=0)] = 0) -> int:
        """Count the items over a threshold.

        Parameters
        ----------
        items : list of int
            The values,
            one per item.
        threshold : int
            Values above it count.

        Returns
        -------
        int
        """
        return sum(1 for item in items if item > threshold)

    assert count.name == "count-things" and count.description == "Count what matters."
    assert count.is_async
    properties = count.parameters["properties"]
    assert properties["items"]["description"] == "The values, one per item."
    assert properties["threshold"]["minimum"] == 0
    facts = read_docstring(count.function.__doc__)
    assert facts.summary == "Count the items over a threshold."


def test_a_function_without_hints_or_with_a_sentinel_default() -> None:
    missing = object()

    def lookup(key, fallback=missing):  # type: ignore[no-untyped-def]
        """Look a key up."""
        return key

    tool = agent_tool(lookup)
    assert tool.parameters["properties"]["key"] == {}
    assert "default" not in tool.parameters["properties"]["fallback"]
    assert tool.parameters["required"] == ["key"]


@pytest.mark.anyio
async def test_partials_and_callable_objects_take_their_hints_and_docstrings_from_the_function() -> None:
    def scale(value: float, factor: float) -> float:
        """Scale a value.

        Args:
            value: the value to scale.
        """
        return value * factor

    doubled = agent_tool(name="double")(functools.partial(scale, factor=2.0))
    assert doubled.description == "Scale a value."
    assert doubled.parameters["properties"]["value"] == {
        "type": "number",
        "description": "the value to scale.",
    }
    assert (await doubled.call({"value": 4})).structured == 8.0

    class Counter:
        """Counts calls."""

        def __init__(self) -> None:
            self.calls = 0

        async def __call__(self, step: int = 1) -> int:
            self.calls += step
            return self.calls

    counter = agent_tool(name="count_calls")(Counter())
    assert counter.is_async and counter.description == "Counts calls."
    assert counter.parameters["properties"]["step"] == {"type": "integer", "default": 1}
    assert (await counter.call({"step": 3})).structured == 3


def test_functions_that_cannot_be_tools_are_refused_at_decoration() -> None:
    def no_doc(x: int) -> int:
        return x

    with pytest.raises(InvalidInput, match="no description"):
        agent_tool(no_doc)

    def star(*values: int) -> int:
        """Sum."""
        return sum(values)

    with pytest.raises(InvalidInput, match=r"\*values"):
        agent_tool(star)

    def frame_in(frame: pandas.DataFrame) -> int:
        """Length."""
        return len(frame)

    with pytest.raises(InvalidInput, match="cannot be a JSON argument"):
        agent_tool(frame_in)

    for bad_name in ("has space", "x\n", "x\r\n", "\nx", "a" * 65):
        with pytest.raises(InvalidInput, match="not valid"):
            agent_tool(name=bad_name, description="d")(no_doc)
    with pytest.raises(InvalidInput, match="not valid"):
        agent_tool(lambda: 1)
    with pytest.raises(InvalidInput, match="needs a function"):
        agent_tool(42)  # type: ignore[call-overload]


def test_the_tool_still_calls_like_the_function() -> None:
    assert search_accounts("a", 2) == ["a", "a"]


# -- calling -----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_arguments_are_validated_strictly_and_named() -> None:
    outcome = await search_accounts.call({"query": "acme", "limit": 2})
    assert outcome == ToolOutcome(
        False, '["acme","acme"]', ["acme", "acme"], "search_accounts", outcome.seconds
    )

    cases: list[tuple[dict[str, Any], str]] = [
        ({"query": "acme", "limit": "2"}, "limit"),
        ({"query": "acme", "limit": 2.0}, "limit"),
        ({"query": "acme", "active_only": 1}, "active_only"),
        ({"query": "acme", "sort": "size"}, "sort"),
        ({"query": "acme", "tags": ["a", 3]}, "tags"),
        ({"limit": 2}, "query"),
        ({"query": "acme", "unknown": 1}, "unknown"),
    ]
    for arguments, argument in cases:
        outcome = await search_accounts.call(arguments)
        assert outcome.is_error and outcome.code == "INVALID_INPUT", arguments
        assert f"argument '{argument}" in outcome.content, outcome.content
        assert "pydantic" not in outcome.content and "validation error" not in outcome.content.lower()
        assert outcome.structured["arguments"] == [argument]

    @agent_tool
    def pick(key: int | str) -> str:
        """Pick by id or by name."""
        return str(key)

    outcome = await pick.call({"key": 1.5})
    assert "argument 'key': input should be a valid integer, or input should be a valid string (got 1.5)" in (
        outcome.content
    )

    outcome = await search_accounts.call(["not", "an", "object"])  # type: ignore[arg-type]
    assert outcome.is_error and "JSON object" in outcome.content


@pytest.mark.anyio
async def test_omitted_arguments_take_the_function_defaults_and_dates_arrive_as_text() -> None:
    seen: dict[str, object] = {}

    @agent_tool
    def remember(day: datetime.date, items: list[int] | None = None, /, label: str = "x") -> str:
        """Remember a day."""
        seen.update(day=day, items=items, label=label)
        return "ok"

    outcome = await remember.call({"day": "2024-03-01", "label": "y"})
    assert not outcome.is_error, outcome.content
    assert seen == {"day": datetime.date(2024, 3, 1), "items": None, "label": "y"}


@pytest.mark.anyio
async def test_async_tools_run_on_the_loop() -> None:
    @agent_tool
    async def slow_double(value: int) -> int:
        """Double a value, slowly."""
        await asyncio.sleep(0.01)
        return value * 2

    outcome = await slow_double.call({"value": 21})
    assert (outcome.is_error, outcome.structured, outcome.content) == (False, 42, "42")


@pytest.mark.anyio
async def test_a_plain_function_that_hands_back_a_coroutine_is_awaited() -> None:
    async def later(value: int) -> int:
        return value + 1

    def start_later(value: int) -> Any:
        """Starts the work, returns an awaitable."""
        return later(value)

    outcome = await agent_tool(start_later).call({"value": 1})
    assert outcome.structured == 2


@pytest.mark.anyio
async def test_plain_tools_run_off_the_loop_thread() -> None:
    @agent_tool
    def where() -> str:
        """Which thread runs me."""
        return threading.current_thread().name

    outcome = await where.call({})
    assert outcome.structured == "elynav-tool-where"


def _raising_tool() -> KernelTool:
    @agent_tool
    def connect(host: str) -> str:
        """Connect somewhere."""
        raise ConnectionError(
            f"cannot reach {host} with api_key=sk-ant-api03-SECRETSECRETSECRET and token: ghp_abcdefghijklmnopqrstuvwxyz0123456789"
        )

    return connect


@pytest.mark.anyio
async def test_a_tool_that_raises_gives_type_and_message_without_traceback_or_secret() -> None:
    outcome = await _raising_tool().call({"host": "crm.example"})
    assert outcome.is_error and outcome.code == "TOOL_FAILED"
    assert "ConnectionError: cannot reach crm.example" in outcome.content
    assert outcome.structured["exception_type"] == "ConnectionError"
    assert "SECRETSECRET" not in outcome.content and "ghp_abcdef" not in outcome.content
    assert "[redacted]" in outcome.content
    assert (
        "Traceback" not in outcome.content and "File " not in outcome.content and ".py" not in outcome.content
    )


@pytest.mark.anyio
async def test_a_typed_error_keeps_its_code_and_github_tokens_are_redacted_in_async_tools_too() -> None:
    @agent_tool
    async def find(name: str) -> str:
        """Find one."""
        raise NotFound(f"no account {name}")

    outcome = await find.call({"name": "acme"})
    assert outcome.code == "NOT_FOUND" and outcome.content == "NOT_FOUND: no account acme"


@pytest.mark.anyio
async def test_a_hanging_async_tool_is_cut_by_the_timeout() -> None:
    cancelled = asyncio.Event()

    @agent_tool
    async def hang() -> None:
        """Never ends."""
        try:
            await asyncio.sleep(3600)
        finally:
            cancelled.set()

    started = time.monotonic()
    outcome = await kernel_tools(hang, tool_timeout=0.2).call("hang", {})
    assert time.monotonic() - started < 2
    assert outcome.is_error and outcome.code == "TIMEOUT"
    assert "did not finish within 0.2 s" in outcome.content
    assert cancelled.is_set()


@pytest.mark.anyio
async def test_a_hanging_plain_tool_is_cut_and_the_loop_stays_free() -> None:
    release = threading.Event()

    @agent_tool
    def block() -> str:
        """Blocks its thread."""
        release.wait(10)
        return "late"

    tools = kernel_tools(block)
    tools.tool_timeout = 0.2
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    outcome = await tools.call("block", {})
    ticker.cancel()
    release.set()
    assert outcome.is_error and outcome.code == "TIMEOUT" and "thread may still be running" in outcome.content
    assert ticks >= 5  # the loop ran while the tool blocked


def test_the_timeout_and_the_bound_are_checked() -> None:
    with pytest.raises(InvalidInput):
        kernel_tools(search_accounts, tool_timeout=0)
    with pytest.raises(InvalidInput):
        kernel_tools(search_accounts, tool_timeout=float("inf"))
    with pytest.raises(InvalidInput):
        kernel_tools(search_accounts, max_result_bytes=10)
    tools = kernel_tools(search_accounts)
    assert tools.tool_timeout == 60 and tools.max_result_bytes == 64 * 1024
    with pytest.raises(InvalidInput):
        tools.tool_timeout = -1


# -- results -----------------------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    y: float


@pytest.mark.anyio
async def test_results_that_are_not_json_are_converted() -> None:
    frame = pandas.DataFrame({"a": [1, 2], "when": pandas.to_datetime(pandas.Series(["2024-01-01", None]))})

    @agent_tool
    def everything() -> dict[object, object]:
        """Many kinds of values."""
        return {
            "frame": frame,
            "series": pandas.Series([1.5, numpy.nan], name="score"),
            "int64": numpy.int64(7),
            "float32": numpy.float32(0.5),
            "bool": numpy.bool_(True),
            "array": numpy.arange(3),
            "when": datetime.datetime(2024, 1, 2, 3, 4, 5),
            "day": datetime.date(2024, 1, 2),
            "stamp": pandas.Timestamp("2024-05-06"),
            "elapsed": datetime.timedelta(minutes=2),
            "path": Path("/tmp/x.csv"),
            "tags": {"b", "a"},
            "tuple": (1, 2),
            "price": decimal.Decimal("1.10"),
            "color": Color.RED,
            "point": Point(1, 2.5),
            "missing": pandas.NA,
            "nan": float("nan"),
            3: "int key",
        }

    outcome = await everything.call()
    assert not outcome.is_error, outcome.content
    value = outcome.structured
    assert value["frame"] == [{"a": 1, "when": "2024-01-01T00:00:00"}, {"a": 2, "when": None}]
    assert value["series"] == [{"score": 1.5}, {"score": None}]
    assert (value["int64"], value["float32"], value["bool"], value["array"]) == (7, 0.5, True, [0, 1, 2])
    assert value["when"] == "2024-01-02T03:04:05" and value["day"] == "2024-01-02"
    assert value["stamp"] == "2024-05-06T00:00:00" and value["elapsed"] == 120.0
    assert value["path"] == "/tmp/x.csv" and value["tags"] == ["a", "b"] and value["tuple"] == [1, 2]
    assert value["price"] == "1.10" and value["color"] == "red" and value["point"] == {"x": 1, "y": 2.5}
    assert value["missing"] is None and value["nan"] is None and value["3"] == "int key"


@pytest.mark.anyio
async def test_a_frame_with_a_real_index_keeps_it() -> None:
    @agent_tool
    def totals() -> pandas.Series:
        """Totals per kind."""
        return pandas.Series([3, 4], index=pandas.Index(["call", "email"], name="kind"), name="total")

    outcome = await totals.call()
    assert outcome.structured == [{"kind": "call", "total": 3}, {"kind": "email", "total": 4}]


@pytest.mark.anyio
async def test_results_with_no_json_form_are_refused_with_a_typed_message() -> None:
    @agent_tool
    def handle() -> object:
        """Returns a lock."""
        return {"lock": threading.Lock()}

    outcome = await handle.call()
    assert outcome.is_error and outcome.code == "TOOL_FAILED"
    assert (
        "['lock']" in outcome.content
        and "lock" in outcome.content
        and "cannot be sent as JSON" in outcome.content
    )

    @agent_tool
    def raw() -> bytes:
        """Returns bytes."""
        return b"\x00"

    outcome = await raw.call()
    assert outcome.is_error and "bytes" in outcome.content and "decode" in outcome.content


@pytest.mark.anyio
async def test_results_are_bounded_in_bytes_and_say_so() -> None:
    @agent_tool
    def many(count: int) -> list[dict[str, object]]:
        """Many rows."""
        return [{"id": index, "text": "x" * 50} for index in range(count)]

    tools = kernel_tools(many, max_result_bytes=2048)
    small = await tools.call("many", {"count": 3})
    assert not small.truncated and len(small.structured) == 3
    big = await tools.call("many", {"count": 10_000})
    assert big.truncated and not big.is_error
    assert len(big.content.encode()) <= 2048
    assert big.structured["total_items"] == 10_000
    assert 0 < big.structured["returned_items"] == len(big.structured["items"]) < 10_000

    @agent_tool
    def huge_frame() -> pandas.DataFrame:
        """A big frame."""
        return pandas.DataFrame({"value": numpy.arange(1_000_000)})

    outcome = await kernel_tools(huge_frame, max_result_bytes=4096).call("huge_frame")
    assert outcome.truncated and outcome.structured["total_items"] == 1_000_000
    assert len(outcome.content.encode()) <= 4096

    @agent_tool
    def long_text() -> str:
        """A long text."""
        return "é" * 100_000

    outcome = await kernel_tools(long_text, max_result_bytes=1024).call("long_text")
    assert outcome.truncated and outcome.structured["total_bytes"] > 100_000
    assert outcome.structured["text_prefix"].startswith('"éé')
    assert len(outcome.content.encode()) <= 1024

    @agent_tool
    def report() -> dict[str, object]:
        """A report with a long list."""
        return {"title": "report", "rows": list(range(100_000))}

    outcome = await kernel_tools(report, max_result_bytes=2048).call("report")
    assert outcome.truncated and outcome.structured["title"] == "report"
    assert outcome.structured["total_rows"] == 100_000 and outcome.structured["rows"][:3] == [0, 1, 2]
    assert len(outcome.content.encode()) <= 2048


# -- sets --------------------------------------------------------------------------------------------


def test_sets_are_built_from_functions_tools_and_sets_and_refuse_collisions() -> None:
    def ping() -> str:
        """Answer pong."""
        return "pong"

    first = kernel_tools(ping, search_accounts)
    assert isinstance(first, KernelToolSet) and first.names == ["ping", "search_accounts"]

    @agent_tool(name="other")
    def other() -> int:
        """Another one."""
        return 1

    merged = kernel_tools(first, other)
    assert merged.names == ["ping", "search_accounts", "other"] and "other" in merged and len(merged) == 3

    with pytest.raises(InvalidInput, match="'search_accounts'") as caught:
        kernel_tools(first, search_accounts)
    assert caught.value.code == "INVALID_INPUT"

    @agent_tool(name="ping")
    def second_ping() -> str:
        """Another ping."""
        return "pong 2"

    with pytest.raises(InvalidInput, match="'ping'"):
        kernel_tools(ping, second_ping)
    with pytest.raises(InvalidInput, match="kernel_tools takes"):
        kernel_tools([ping])


@pytest.mark.anyio
async def test_a_set_calls_by_name_and_an_unknown_name_is_a_tool_error() -> None:
    tools = kernel_tools(search_accounts)
    outcome = await tools.call("search_accounts", {"query": "a", "limit": 1})
    assert outcome.structured == ["a"]
    outcome = await tools.call("nope", {})
    assert outcome.is_error and outcome.code == "NOT_FOUND" and "search_accounts" in outcome.content
    with pytest.raises(NotFound):
        tools["nope"]


def test_a_set_shows_itself_as_a_frame_and_html() -> None:
    tools = kernel_tools(search_accounts)
    frame = tools.to_frame()
    assert list(frame.columns) == ["name", "description", "parameters"]
    row = frame.iloc[0]
    assert row["name"] == "search_accounts" and row["description"] == "Search the accounts by name."
    assert row["parameters"].startswith("query: string, limit: integer = 10")
    html = tools._repr_html_()
    assert "<table>" in html and "search_accounts" in html and "Search the accounts by name." in html
    assert tools.definitions()[0]["parameters"]["required"] == ["query"]


# -- the threads of plain tools ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_plain_tools_reuse_an_idle_thread_and_a_hung_one_never_blocks_the_next_call():
    from elynav_nb.agents.tools.tool_threads import ToolThreads, tool_threads

    release = threading.Event()

    @agent_tool
    def which_thread() -> int:
        """The thread it runs on."""
        return threading.get_ident()

    @agent_tool
    def hang() -> str:
        """Waits for the test."""
        release.wait(10)
        return "released"

    first = await which_thread.call({})
    # the result reaches the loop just before the thread puts itself back among the idle ones: wait for that
    for _ in range(200):
        if tool_threads.idle_count:
            break
        await asyncio.sleep(0.01)
    second = await which_thread.call({})
    assert first.structured == second.structured  # the idle thread took the second call
    hung = asyncio.ensure_future(hang.call({}, timeout=5))
    await asyncio.sleep(0.05)
    third = await which_thread.call({}, timeout=2)  # the hung call holds its thread: another one runs this
    assert not third.is_error
    release.set()
    assert (await hung).structured == "released"

    pool = ToolThreads()
    done = threading.Event()
    pool.run(done.set)
    assert done.wait(2)
    for _ in range(100):
        if pool.idle_count == 1:
            break
        time.sleep(0.01)
    assert pool.idle_count == 1  # the finished thread waits for the next job
