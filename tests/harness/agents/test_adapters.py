"""harness.agents.adapters.plain: a plain callable and an OpenAI-style tool loop.

The toolbox is bound to the opening bell of Wednesday 2023-03-08 (14:30Z) on the
pit clock; three rows were accepted since Tuesday's bell, one after Wednesday's.
"""

from __future__ import annotations

import inspect
import json
from datetime import date
from typing import Any

import pytest

from harness.agents.adapters.plain import ToolLoopError, from_callable, from_tool_loop
from harness.agents.base import Decision, Task
from harness.market.calendar import sessions_for
from harness.release.store import ROW_FIELDS
from harness.tools.toolbox import ClockIndex, Toolbox

TABLE = sessions_for(date(2023, 3, 1), date(2023, 3, 10))
SESSION = date(2023, 3, 8)
TOOL_NAMES = {"pit_list", "pit_search", "pit_read", "pit_coverage"}

Call = tuple[str, dict[str, Any], dict[str, Any]]


def key(n: int) -> str:
    return f"r-{n:016x}"


def make_row(n: int, form: str, day: str, accepted: str | None) -> dict[str, Any]:
    cik = f"{2_200_000 + n:010d}"
    row = {
        "row_key": key(n),
        "accession": f"{cik}-23-{n:06d}",
        "form": form,
        "cik": cik,
        "issuer": f"Issuer {n} Inc.",
        "ticker": None,
        "title": f"{form} - Issuer {n} Inc. ({cik}) (Filer) {day}",
        "partition_date": day,
        "published_at": day,
        "acceptance_at": accepted,
        "filename": f"edgar/data/{int(cik)}/{cik}-23-{n:06d}.txt",
    }
    assert set(row) == set(ROW_FIELDS)
    return row


ROWS = [
    make_row(1, "8-K", "2023-03-06", None),  # known 2023-03-06T23:59:59Z: before the window
    make_row(2, "8-K", "2023-03-07", "2023-03-07T10:00:00-05:00"),  # new
    make_row(3, "4", "2023-03-07", "2023-03-07T18:00:00-05:00"),  # new
    make_row(4, "8-K", "2023-03-08", "2023-03-08T08:00:00-05:00"),  # new
    make_row(5, "8-K", "2023-03-08", "2023-03-08T12:00:00-05:00"),  # after the bell
]
NEW = [key(2), key(3), key(4)]


def make_toolbox() -> tuple[Toolbox, list[Call]]:
    calls: list[Call] = []

    def record(tool: str, args: dict[str, Any], result: dict[str, Any], *_extra: Any) -> None:
        calls.append((tool, args, result))

    s = TABLE.index_on_or_after(SESSION)
    assert TABLE.sessions[s] == SESSION
    tools = Toolbox(
        arm="main",
        index=ClockIndex.build(ROWS, "pit"),
        rows=ROWS,
        positions={r["row_key"]: i for i, r in enumerate(ROWS)},
        bell=TABLE.opens[s],
        previous_bell=TABLE.opens[s - 1],
        session_date=SESSION.isoformat(),
        record=record,
    )
    return tools, calls


def trade_task(tools: Toolbox) -> Task:
    return Task("trade", "pick filings", "main", "pit", tools.session_date, tools.known_at)


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


class Script:
    """A scripted model: returns the given replies in turn and keeps what it saw."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.seen: list[list[dict[str, Any]]] = []
        self.schemas: list[list[dict[str, Any]]] = []

    def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        self.seen.append([dict(m) for m in messages])
        self.schemas.append(tools)
        return self.replies.pop(0)


def final(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


# -- from_callable ---------------------------------------------------------------


def test_from_callable_list_gives_picks() -> None:
    tools, _ = make_toolbox()
    seen: list[tuple[str, Toolbox]] = []

    def fn(prompt: str, t: Toolbox) -> list[str]:
        seen.append((prompt, t))
        return [r["row_key"] for r in t.pit_list()["rows"]]

    decision = from_callable(fn).new().decide(trade_task(tools), tools)
    assert decision.picks == tuple(NEW)
    assert seen == [("pick filings", tools)]


def test_from_callable_str_gives_text() -> None:
    tools, _ = make_toolbox()
    decision = (
        from_callable(lambda prompt, t: "nothing today").new().decide(trade_task(tools), tools)
    )
    assert decision == Decision(picks=(), text="nothing today")


def test_from_callable_dict_gives_picks_and_text() -> None:
    tools, _ = make_toolbox()
    spec = from_callable(lambda prompt, t: {"picks": [key(2)], "text": "one 8-K"})
    decision = spec.new().decide(trade_task(tools), tools)
    assert decision == Decision(picks=(key(2),), text="one 8-K")


def test_from_callable_makes_a_fresh_agent_per_new() -> None:
    def fn(prompt: str, t: Toolbox) -> list[str]:
        return []

    spec = from_callable(fn)
    first, second = spec.new(), spec.new()
    assert first is not second
    assert type(first) is type(second)
    assert spec.name == fn.__qualname__


# -- from_tool_loop ----------------------------------------------------------------


def test_tool_loop_runs_the_requested_tool_and_records_it() -> None:
    tools, calls = make_toolbox()
    script = Script(
        {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "pit_list", "{}")]},
        final(json.dumps({"picks": [key(2), key(4)]})),
    )
    from_tool_loop(script).new().decide(trade_task(tools), tools)
    assert len(calls) == 1
    tool, args, result = calls[0]
    assert tool == "pit_list"
    assert args == {"limit": 100, "offset": 0, "since": "previous_session", "form": None}
    assert [r["row_key"] for r in result["rows"]] == NEW


def test_tool_loop_passes_json_string_arguments_to_the_tool() -> None:
    tools, calls = make_toolbox()
    script = Script(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                tool_call("c1", "pit_list", json.dumps({"since": "window_start", "limit": 2}))
            ],
        },
        final("{}"),
    )
    from_tool_loop(script).new().decide(trade_task(tools), tools)
    (_, args, result), *_ = calls
    assert args["since"] == "window_start"
    assert args["limit"] == 2
    assert [r["row_key"] for r in result["rows"]] == [key(1), key(2)]


def test_tool_loop_answers_with_a_tool_message_carrying_the_result() -> None:
    tools, calls = make_toolbox()
    script = Script(
        {"role": "assistant", "content": None, "tool_calls": [tool_call("c-7", "pit_list", "{}")]},
        final(json.dumps({"picks": [key(2)]})),
    )
    from_tool_loop(script).new().decide(trade_task(tools), tools)
    second = script.seen[1]
    assert second[-2]["role"] == "assistant"
    assert second[-2]["tool_calls"][0]["id"] == "c-7"
    answer = second[-1]
    assert answer["role"] == "tool"
    assert answer["tool_call_id"] == "c-7"
    assert json.loads(answer["content"]) == calls[0][2]


def test_tool_loop_final_json_picks_become_the_decision() -> None:
    tools, _ = make_toolbox()
    content = json.dumps({"picks": [key(2), key(4)]})
    script = Script(
        {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "pit_list", "{}")]},
        final(content),
    )
    decision = from_tool_loop(script).new().decide(trade_task(tools), tools)
    assert decision.picks == (key(2), key(4))
    assert decision.text == content
    assert len(script.seen) == 2


def test_tool_loop_free_text_picks_row_keys() -> None:
    tools, _ = make_toolbox()
    text = (
        f"Buy {key(2)} and {key(4)}; {key(2)} again. Not r-0123 (too short), "
        "not r-0123456789ABCDEF (upper case), not r-0123456789abcdef0 (too long)."
    )
    decision = from_tool_loop(Script(final(text))).new().decide(trade_task(tools), tools)
    assert decision.picks == (key(2), key(4))
    assert decision.text == text


def test_tool_loop_that_never_stops_raises_after_max_steps() -> None:
    tools, calls = make_toolbox()
    forever = {
        "role": "assistant",
        "content": None,
        "tool_calls": [tool_call("c", "pit_coverage", "{}")],
    }
    script = Script(*[forever] * 10)
    agent = from_tool_loop(script, max_steps=3).new()
    with pytest.raises(ToolLoopError):
        agent.decide(trade_task(tools), tools)
    assert len(script.seen) == 3
    assert [tool for tool, _, _ in calls] == ["pit_coverage"] * 3


@pytest.mark.parametrize(
    ("name", "arguments", "fragment"),
    [
        ("pit_delete", "{}", "unknown tool"),
        ("pit_read", '{"row_key": ', "not JSON"),
        ("pit_read", '["r-0000000000000002"]', "JSON object"),
        ("pit_read", '{"key": "r-0000000000000002"}', "bad arguments"),
        # told to the model, which may call again: never handed to the toolbox (where it
        # would be the agent's protocol fault)
        ("pit_read", '{"row_key": {"a": 1}}', "pit_read: row_key must be a string, got an object"),
        ("pit_list", '{"limit": "5"}', "pit_list: limit must be an integer or null, got a string"),
    ],
)
def test_tool_loop_bad_calls_are_answered_with_an_error_message(
    name: str, arguments: str, fragment: str
) -> None:
    tools, calls = make_toolbox()
    script = Script(
        {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", name, arguments)]},
        final(json.dumps({"picks": []})),
    )
    decision = from_tool_loop(script).new().decide(trade_task(tools), tools)
    assert decision.picks == ()
    answer = script.seen[1][-1]
    assert answer["role"] == "tool"
    assert answer["tool_call_id"] == "c1"
    error = json.loads(answer["content"])["error"]
    assert fragment in error
    assert calls == []


def test_tool_loop_schema_lists_exactly_the_four_tools() -> None:
    tools, _ = make_toolbox()
    script = Script(final("{}"))
    from_tool_loop(script).new().decide(trade_task(tools), tools)
    (schema,) = script.schemas
    assert len(schema) == 4
    assert {spec["function"]["name"] for spec in schema} == TOOL_NAMES
    for spec in schema:
        assert spec["type"] == "function"
        assert spec["function"]["parameters"]["type"] == "object"
        assert spec["function"]["parameters"]["additionalProperties"] is False


def test_tool_loop_schema_matches_the_toolbox_signatures() -> None:
    tools, _ = make_toolbox()
    script = Script(final("{}"))
    from_tool_loop(script).new().decide(trade_task(tools), tools)
    for spec in script.schemas[0]:
        name = spec["function"]["name"]
        params = inspect.signature(getattr(tools, name)).parameters
        parameters = spec["function"]["parameters"]
        assert set(parameters["properties"]) == set(params), name
        required = {p for p, v in params.items() if v.default is inspect.Parameter.empty}
        assert set(parameters["required"]) == required, name


def test_tool_loop_starts_from_a_system_and_a_user_message() -> None:
    tools, _ = make_toolbox()
    script = Script(final("{}"))
    task = trade_task(tools)
    from_tool_loop(script).new().decide(task, tools)
    first = script.seen[0]
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[1]["content"] == task.prompt
