"""Each cell's usage from a trajectory's events, in their order: the exchanges before a
decision are that decision's, a failed attempt's are its cell's, the probe's are the last
shifted cell's that served it; an agent's own cost report is kept apart, as said."""

from __future__ import annotations

import json
from typing import Any

from msgspec import UNSET

from harness.receipt.model import SelfReportedCost
from harness.receipt.usage import UsageTally, self_reported


def _exchange(
    prompt: int, completion: int, model: str = "m-1", status: int = 200
) -> dict[str, Any]:
    body = {
        "object": "chat.completion",
        "model": model,
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }
    return {
        "event": "model_exchange",
        "status": status,
        "response_headers": [["Content-Type", "application/json"]],
        "response_body": {"text": json.dumps(body)},
        "error": None,
        "cut": False,
    }


def _cell(kind: str, arm: str, clock: str, **extra: Any) -> dict[str, Any]:
    return {"event": kind, "arm": arm, "clock": clock, **extra}


def _tally(events: list[dict[str, Any]]) -> UsageTally:
    tally = UsageTally()
    for event in events:
        tally.take(event)
    return tally


def test_the_exchanges_before_a_decision_are_its_own_and_those_after_the_last_the_cells() -> None:
    events = [
        _cell("cell_start", "main", "pit"),
        _cell("session", "main", "pit"),
        _exchange(100, 10),
        _exchange(50, 5, model="m-2"),
        _cell("decision", "main", "pit"),
        _cell("session", "main", "pit"),
        _cell("decision", "main", "pit"),  # no call this time
        _cell("session", "main", "pit"),
        _exchange(7, 1, status=500),
        _exchange(20, 2),
        _cell("decision", "main", "pit"),
        _exchange(1, 1),  # as the agent's process ended
        _cell("cell_end", "main", "pit"),
    ]
    usage = _tally(events).blocks([("main", "pit")])[("main", "pit")]
    assert (usage.exchanges, usage.unknown_exchanges) == (5, 1)
    assert usage.unknown_because == {"error_status": 1}
    assert (usage.input_tokens, usage.output_tokens) == (171, 18)
    assert {name: t.input_tokens for name, t in usage.by_model.items()} == {"m-1": 121, "m-2": 50}
    decided = usage.decisions
    assert (decided.decisions, decided.with_exchanges, decided.with_unknown) == (3, 2, 1)
    assert (decided.input_tokens, decided.output_tokens, decided.most_tokens) == (170, 17, 165)
    assert usage.self_reported is UNSET  # no decision reported a cost


def test_a_failed_attempts_exchanges_count_in_its_cell_and_in_no_decision() -> None:
    events = [
        {"event": "attempt_failed", "cell": "main/leaky", "attempt": 1},
        _exchange(30, 3),
        _cell("cell_start", "main", "leaky"),
        _exchange(10, 1),
        _cell("decision", "main", "leaky"),
        _cell("cell_end", "main", "leaky"),
    ]
    usage = _tally(events).blocks([("main", "leaky")])[("main", "leaky")]
    assert (usage.exchanges, usage.failed_attempt_exchanges) == (2, 1)
    assert usage.input_tokens == 40 and usage.decisions.input_tokens == 10


def test_the_probes_exchanges_count_in_the_last_shifted_cell_that_served_it() -> None:
    cells = [("shifted", "leaky"), ("shifted", "pit")]
    events = [
        _cell("cell_start", "shifted", "leaky"),
        _cell("session", "shifted", "leaky"),
        _cell("decision", "shifted", "leaky"),
        _cell("cell_end", "shifted", "leaky"),
        _cell("cell_start", "shifted", "pit"),  # its agent never started: no session
        _cell("cell_end", "shifted", "pit"),
        _exchange(9, 9),  # the probe's
        {"event": "attempt_failed", "cell": "probe", "attempt": 1},
        _exchange(4, 4),  # the probe's failed attempt's
    ]
    tally = _tally(events)
    blocks = tally.blocks(cells)
    assert blocks[("shifted", "leaky")].probe_exchanges == 2
    assert blocks[("shifted", "leaky")].input_tokens == 13
    assert blocks[("shifted", "pit")].exchanges == 0
    assert sum(b.exchanges for b in blocks.values()) == tally.exchanges == 2


def test_a_cell_never_started_has_usage_of_zeros() -> None:
    usage = UsageTally().blocks([("redacted", "dump")])[("redacted", "dump")]
    assert usage.exchanges == usage.input_tokens == usage.decisions.decisions == 0
    assert usage.by_model == {}


def test_an_agents_own_cost_is_summed_as_said_and_apart_from_what_was_measured() -> None:
    events = [
        _cell("cell_start", "main", "pit"),
        _exchange(100, 10),
        _cell("decision", "main", "pit", cost={"cost_usd": 0.25, "tokens_in": 7}),
        _cell("decision", "main", "pit"),
        _cell("decision", "main", "pit", cost={"tokens_out": 3, "reasoning_tokens": 2}),
        _cell("cell_end", "main", "pit"),
    ]
    usage = _tally(events).blocks([("main", "pit")])[("main", "pit")]
    said = usage.self_reported
    assert isinstance(said, SelfReportedCost)
    assert (said.decisions, said.cost_nanodollars) == (2, 250_000_000)
    assert (said.tokens_in, said.tokens_out, said.reasoning_tokens) == (7, 3, 2)
    assert usage.input_tokens == 100  # the measured figure is the response's


def test_a_cost_report_that_is_not_one_is_not_summed() -> None:
    assert self_reported({"cost_usd": -1}) is None
    assert self_reported({"tokens_in": 1.5}) is None
    assert self_reported({"tokens_in": True}) is None
    assert self_reported({"latency_ms": 3}) is None
    assert self_reported([1]) is None
    huge = self_reported({"cost_usd": 1e300, "tokens_in": 2**70})
    assert huge is not None and huge["cost_nanodollars"] == huge["tokens_in"] == 2**53 - 1
