"""The sharpebench dialect of the wire protocol: our types against sharpebench's own
published schemas in both directions, every wire type closed with a diagnostic that names
the field, and the semantic checks against the observation a decision answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from harness.protocol import AgentProtocolFault, pit, validate_for
from harness.protocol import decision_from_wire as any_decision_from_wire
from harness.protocol import observation_from_wire as any_observation_from_wire
from harness.protocol import sharpebench as sb
from harness.protocol.schemas import HERE, PUBLISHED, generate
from tests.support.data import shared_path

FULL_DECISION = {
    "orders": [
        {"symbol": "k1", "action": "buy", "target_weight": 0.25, "confidence": 0.7,
         "rationale": "the filing"},
        {"symbol": "k2", "action": "close", "target_weight": 0.0},
    ],
    "reasoning": "two orders",
    "cost": {"cost_usd": 0.01, "tokens_in": 120, "tokens_out": 30, "reasoning_tokens": 9},
}  # fmt: skip
FULL_OBSERVATION = {
    "date": "2033-03-01",
    "cash": 1.0,
    "symbols": [
        {"symbol": "k1", "close_history": [], "fundamentals": {"pe": 12.5},
         "news": ["8-K: a title"]},
        {"symbol": "k2", "close_history": [10.0, 10.5]},
    ],
    "portfolio": [{"symbol": "k2", "shares": 1.0, "avg_price": 0.0}],
}  # fmt: skip


def decision_from_wire(text: str | bytes) -> Any:
    return any_decision_from_wire(text, dialect="sharpebench")


def observation_from_wire(text: str | bytes) -> Any:
    return any_observation_from_wire(text, dialect="sharpebench")


def reference(name: str) -> dict[str, Any]:
    return json.loads(shared_path("reference", "sharpebench-schema", name).read_text())


def _objects(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every object schema by its title (the root) or its $defs name."""
    found = {schema["title"]: schema}
    found.update(schema.get("$defs", {}))
    return found


def test_the_published_schemas_are_the_ones_the_types_generate(tmp_path: Path) -> None:
    for path in generate(tmp_path):
        published = HERE / path.relative_to(tmp_path)
        assert published.read_text() == path.read_text(), f"{published} is stale: make schema"


@pytest.mark.parametrize("name", ["observation.schema.json", "decision.schema.json"])
def test_our_types_and_sharpebenchs_schema_agree_in_both_directions(name: str) -> None:
    ours = json.loads((HERE / "sharpebench" / name).read_text())
    theirs = reference(name)
    assert set(_objects(ours)) == set(_objects(theirs))
    for title, mine in _objects(ours).items():
        other = _objects(theirs)[title]
        assert mine["additionalProperties"] is False, f"{title} is not closed"
        assert other.get("additionalProperties") is False
        assert set(mine["properties"]) == set(other["properties"]), title
        assert set(mine.get("required", [])) == set(other.get("required", [])), title
        for field, spec in other["properties"].items():
            for bound in ("minimum", "maximum", "type"):
                if bound in spec:
                    assert mine["properties"][field].get(bound) == spec[bound], (title, field)
            if "enum" in spec:
                assert set(mine["properties"][field]["enum"]) == set(spec["enum"])


def test_full_and_minimal_messages_validate_under_sharpebenchs_schemas_and_ours() -> None:
    decision = decision_from_wire(json.dumps(FULL_DECISION))
    observation = observation_from_wire(json.dumps(FULL_OBSERVATION))
    for message, name in ((decision, "decision"), (observation, "observation")):
        encoded = json.loads(msgspec.json.encode(message))
        jsonschema.Draft202012Validator(reference(f"{name}.schema.json")).validate(encoded)
    assert json.loads(msgspec.json.encode(decision)) == FULL_DECISION  # nothing added, lost
    minimal = decision_from_wire(b'{"orders": []}')
    assert json.loads(msgspec.json.encode(minimal)) == {"orders": []}
    # an omitted confidence stays absent (the newest contract): nothing is filled in
    [order] = decision_from_wire(
        b'{"orders": [{"symbol": "k1", "action": "hold", "target_weight": 0}]}'
    ).orders
    assert order.confidence is msgspec.UNSET
    assert "confidence" not in json.loads(msgspec.json.encode(order))


UNKNOWN = [
    ("decision", {**FULL_DECISION, "latency_ms": 12}, "latency_ms", "$",
     ["orders", "reasoning", "cost"]),
    ("decision", {"orders": [{**FULL_DECISION["orders"][0], "size": 3}]}, "size", "$.orders[0]",
     ["symbol", "action", "target_weight", "confidence", "rationale"]),
    ("decision", {**FULL_DECISION, "cost": {"usd": 1}}, "usd", "$.cost",
     ["cost_usd", "tokens_in", "tokens_out", "reasoning_tokens"]),
    ("observation", {**FULL_OBSERVATION, "nav": 1}, "nav", "$",
     ["date", "cash", "symbols", "portfolio"]),
    ("observation", {**FULL_OBSERVATION, "symbols": [{"symbol": "k", "close_history": [],
                                                      "eps": 1}]},
     "eps", "$.symbols[0]", ["symbol", "close_history", "fundamentals", "news"]),
    ("observation", {**FULL_OBSERVATION, "portfolio": [{"symbol": "k", "shares": 1,
                                                        "avg_price": 0, "side": "long"}]},
     "side", "$.portfolio[0]", ["symbol", "shares", "avg_price"]),
]  # fmt: skip


@pytest.mark.parametrize(("what", "message", "field", "path", "accepted"), UNKNOWN)
def test_an_unknown_field_is_refused_in_every_wire_type_naming_it(
    what: str, message: dict[str, Any], field: str, path: str, accepted: list[str]
) -> None:
    read = decision_from_wire if what == "decision" else observation_from_wire
    with pytest.raises(AgentProtocolFault) as refused:
        read(json.dumps(message))
    fault = refused.value
    assert (fault.field, fault.path) == (field, path)
    text = str(fault)
    assert f"unknown field `{field}`" in text and ", ".join(accepted) in text
    assert f"harness/protocol/published/sharpebench/{what}.schema.json" in text
    assert "additionalProperties: false" in text


@pytest.mark.parametrize(
    "raw",
    [
        b'{"orders": [{"symbol": "k1", "action": "buy", "target_weight": 0.5, "confidence": null}]}',
        b'{"orders": [{"symbol": "k1", "action": "buy", "target_weight": 0.5, "confidence": "0.5"}]}',
        b'{"orders": [{"symbol": "k1", "action": "BUY", "target_weight": 0.5}]}',
        b'{"orders": [{"symbol": "k1", "action": "buy", "target_weight": 1.5}]}',
        b'{"orders": [{"symbol": "k1", "action": "buy", "target_weight": NaN}]}',
        b'{"orders": [], "cost": {"tokens_in": -1}}',
        b'{"orders": [], "cost": {"tokens_in": 1.5}}',
        b'{"orders": [], "cost": {"cost_usd": -0.01}}',
        b'{"orders": {}}',
        b"[]",
        b"not json",
        b"",
    ],
)
def test_a_malformed_decision_is_the_agents_protocol_fault(raw: bytes) -> None:
    with pytest.raises(AgentProtocolFault, match="refused by the closed wire contract"):
        decision_from_wire(raw)


def test_a_decision_must_fit_the_observation_it_answers() -> None:
    observation = observation_from_wire(json.dumps(FULL_OBSERVATION))
    validate_for(decision_from_wire(json.dumps(FULL_DECISION)), observation)  # fits
    unseen = {"orders": [{"symbol": "k9", "action": "buy", "target_weight": 0.1}]}
    with pytest.raises(AgentProtocolFault, match=r'orders\[0\]\.symbol "k9" was not observed'):
        validate_for(decision_from_wire(json.dumps(unseen)), observation)
    twice = {"orders": [{"symbol": "k1", "action": "buy", "target_weight": 0.1}] * 2}
    with pytest.raises(AgentProtocolFault, match='duplicate order for symbol "k1"') as refused:
        validate_for(decision_from_wire(json.dumps(twice)), observation)
    assert refused.value.path == "$.orders[1].symbol"


def test_an_agent_written_from_sharpebenchs_schemas_alone_is_read() -> None:
    """Messages built only from the reference schema's required fields and enums (not from
    our types) decode, and every enum value is accepted."""
    theirs = reference("decision.schema.json")
    order_schema = theirs["$defs"]["Order"]
    for action in order_schema["properties"]["action"]["enum"]:
        order = {field: {"symbol": "k1", "action": action, "target_weight": -1}[field]
                 for field in order_schema["required"]}  # fmt: skip
        decision = decision_from_wire(json.dumps({"orders": [order]}))
        assert decision.orders[0].action == action


def test_the_published_dialects_are_listed_once() -> None:
    assert {(d, n) for d, n, *_ in PUBLISHED} == {
        ("sharpebench", "observation.schema.json"),
        ("sharpebench", "decision.schema.json"),
        ("pit", "to-agent.schema.json"),
        ("pit", "from-agent.schema.json"),
        ("pit", "step.schema.json"),
    }
    for types in (sb.WIRE_TYPES, pit.WIRE_TYPES):
        assert all(t.__struct_config__.forbid_unknown_fields for t in types)


# -- our own dialect, pit/1 ------------------------------------------------------------------

PIT_MESSAGES = {
    "task": {"type": "task", "kind": "trade", "prompt": "Pick.", "arm": "shifted",
             "clock": "pit", "session_date": "2033-03-01", "known_at": "2033-03-01T14:30:00Z",
             "newly_knowable": 3},
    "tool": {"type": "tool", "tool": "pit_list", "args": {"limit": 5}},
    "result": {"type": "result", "result": {"rows": [], "known_at": "2033-03-01T14:30:00Z"}},
    "decision": {"type": "decision", "picks": ["k1", "k2"], "text": "two"},
}  # fmt: skip


def _closed_everywhere(schema: Any) -> list[str]:
    """Every object schema inside ``schema`` that is not closed."""
    open_ones = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            is_object = node.get("type") == "object" and "properties" in node
            if is_object and node.get("additionalProperties") is not False:
                open_ones.append(node.get("title", "?"))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return open_ones


@pytest.mark.parametrize("name", ["to-agent.schema.json", "from-agent.schema.json"])
def test_the_pit_schemas_are_closed_and_carry_every_message(name: str) -> None:
    schema = json.loads((HERE / "pit" / name).read_text())
    assert _closed_everywhere(schema) == []
    validator = jsonschema.Draft202012Validator(schema)
    direction = pit.ToAgent if name.startswith("to") else pit.FromAgent
    for message in PIT_MESSAGES.values():
        decoded = None
        try:
            decoded = msgspec.json.decode(json.dumps(message), type=direction)
        except msgspec.ValidationError:
            assert not validator.is_valid(message)  # the other direction's message
            continue
        validator.validate(message)
        assert json.loads(msgspec.json.encode(decoded)) == message  # round trip, unchanged
        assert not validator.is_valid({**message, "extra": 1})


def test_the_http_step_body_is_closed_and_carries_the_harness_messages() -> None:
    schema = json.loads((HERE / "pit" / "step.schema.json").read_text())
    assert _closed_everywhere(schema) == []
    validator = jsonschema.Draft202012Validator(schema)
    for kind in ("task", "result"):
        body = {"session": "s1", "step": 2, "message": PIT_MESSAGES[kind]}
        validator.validate(body)
        assert msgspec.json.decode(json.dumps(body), type=pit.Step).step == 2
        assert not validator.is_valid({**body, "retry": True})
    assert not validator.is_valid({"session": "s1", "step": 1, "message": PIT_MESSAGES["tool"]})
    assert not validator.is_valid({"session": "s1", "step": 0, "message": PIT_MESSAGES["task"]})


@pytest.mark.parametrize("kind", sorted(PIT_MESSAGES))
def test_an_unknown_field_in_a_pit_message_is_refused_naming_it(kind: str) -> None:
    message = {**PIT_MESSAGES[kind], "latency_ms": 3}
    direction = pit.FromAgent if kind in ("tool", "decision") else pit.ToAgent
    with pytest.raises(msgspec.ValidationError, match="unknown field `latency_ms`"):
        msgspec.json.decode(json.dumps(message), type=direction)


def test_a_pit_decision_is_read_with_its_diagnostic() -> None:
    decision = any_decision_from_wire(json.dumps(PIT_MESSAGES["decision"]))  # pit: the default
    assert decision.picks == ["k1", "k2"]
    with pytest.raises(AgentProtocolFault) as refused:
        any_decision_from_wire(json.dumps({**PIT_MESSAGES["decision"], "why": "x"}))
    assert refused.value.field == "why" and "picks, text" in str(refused.value)
    assert "harness/protocol/published/pit/from-agent.schema.json" in str(refused.value)
    with pytest.raises(AgentProtocolFault):
        any_decision_from_wire(b'{"type": "decision", "picks": [""]}')  # an empty key
    with pytest.raises(AgentProtocolFault):
        any_decision_from_wire(b'{"picks": []}')  # its type is part of it


def test_the_pit_tools_are_the_tool_tables() -> None:
    from typing import get_args

    from harness.tools.table import TOOLS

    tools = get_args(msgspec.structs.fields(pit.ToolCall)[0].type)
    assert set(tools) == set(TOOLS)


def test_each_pit_message_says_how_it_may_be_sent_again() -> None:
    published = json.loads((HERE / "pit" / "operations.json").read_text())
    assert published.pop("version") == pit.VERSION
    assert set(published) == set(PIT_MESSAGES)
    assert published["decision"]["changes_state"] and not published["decision"]["retryable"]
