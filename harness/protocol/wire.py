"""Reading an agent's decision off the wire: shape first (``decision_from_wire``), then
what it may say about the observation it answers (``validate_for``). Either failure is an
``AgentProtocolFault``: the agent's, final, never retried (``harness.outcomes``)."""

from __future__ import annotations

import math
import re
from typing import Any, get_args, get_origin

import msgspec
from msgspec import UnsetType

from harness.protocol import pit, sharpebench

DIALECTS = ("pit", "sharpebench")
SCHEMA_DIR = "harness/protocol/published"
_ROOTS: dict[tuple[str, str], type[msgspec.Struct]] = {
    ("pit", "decision"): pit.Decision,
    ("pit", "tool"): pit.ToolCall,
    ("pit", "observation"): pit.Task,
    ("sharpebench", "decision"): sharpebench.Decision,
    ("sharpebench", "observation"): sharpebench.MarketObservation,
}
_FILES = {
    ("pit", "decision"): "pit/from-agent.schema.json",
    ("pit", "tool"): "pit/from-agent.schema.json",
    ("pit", "observation"): "pit/to-agent.schema.json",
    ("sharpebench", "decision"): "sharpebench/decision.schema.json",
    ("sharpebench", "observation"): "sharpebench/observation.schema.json",
}
_DECODERS = {key: msgspec.json.Decoder(root) for key, root in _ROOTS.items()}
_AT = re.compile(r" - at `(\$[^`]*)`$")
_UNKNOWN = re.compile(r"unknown field `([^`]*)`")


class AgentProtocolFault(ValueError):
    """A message an agent sent that the contract refuses; ``field`` names the offending
    field where there is one, ``path`` where it sits (``$.orders[0]``)."""

    def __init__(self, diagnostic: str, *, field: str | None = None, path: str = "$") -> None:
        super().__init__(diagnostic)
        self.field = field
        self.path = path


def _fields(kind: Any) -> list[str]:
    return [f.encode_name for f in msgspec.structs.fields(kind)]


def _struct_at(root: type[msgspec.Struct], path: str) -> Any:
    """The message type at ``path`` (``$.orders[0]``) inside ``root``."""
    kind: Any = root
    for step in re.findall(r"\.([^.\[]+)|\[\d+\]", path.removeprefix("$")):
        if step:  # a field
            fields = {f.encode_name: f.type for f in msgspec.structs.fields(kind)}
            kind = fields.get(step)
        else:  # an item of a list
            kind = get_args(kind)[0] if get_origin(kind) is list else kind
        members = [a for a in get_args(kind) if a is not UnsetType] if get_args(kind) else []
        if get_origin(kind) is not list and len(members) == 1:
            kind = members[0]  # X | UNSET
    return kind


def decision_from_wire(text: str | bytes, *, dialect: str = "pit") -> Any:
    """The agent's decision in ``dialect``, by shape alone; ``AgentProtocolFault`` with a
    diagnostic naming the field, the fields accepted there and the schema otherwise."""
    return _read(text, dialect, "decision")


def message_from_wire(text: str | bytes) -> pit.ToolCall | pit.Decision:
    """What a ``pit`` agent sends in a cell (a tool call or the task's decision), by its
    ``type``; refused as a decision is, the types accepted named when ``type`` is neither."""
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        schema = f"{SCHEMA_DIR}/{_FILES[('pit', 'decision')]}"
        raise AgentProtocolFault(
            f"the message was refused by the closed wire contract: not one JSON object ({exc}) "
            f"({schema})"
        ) from None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "tool":
        tool: pit.ToolCall = _read(text, "pit", "tool")
        return tool
    if kind == "decision":
        decision: pit.Decision = _read(text, "pit", "decision")
        return decision
    raise AgentProtocolFault(
        'the message was refused by the closed wire contract: its "type" must be "tool" or '
        f'"decision", not {str(kind)[:40]!r} ({SCHEMA_DIR}/{_FILES[("pit", "decision")]})',
        field="type",
    )


def observation_from_wire(text: str | bytes, *, dialect: str = "pit") -> Any:
    """An observation in ``dialect`` (what an agent reads: a ``pit`` task, a sharpebench
    market observation), by shape alone, refused as a decision is."""
    return _read(text, dialect, "observation")


def _read(text: str | bytes, dialect: str, what: str) -> Any:
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}: one of {', '.join(DIALECTS)}")
    root = _ROOTS[(dialect, what)]
    schema = f"{SCHEMA_DIR}/{_FILES[(dialect, what)]}"
    lead = f"the {'tool call' if what == 'tool' else what} was refused by the closed wire contract"
    try:
        message = _DECODERS[(dialect, what)].decode(text)
    except msgspec.ValidationError as exc:
        said = str(exc)
        found = _AT.search(said)
        path = found.group(1) if found else "$"
        unknown = _UNKNOWN.search(said)
        accepted = _struct_at(root, path)
        listed = (
            f"; the fields accepted at {path} are {', '.join(_fields(accepted))}"
            if isinstance(accepted, type) and issubclass(accepted, msgspec.Struct)
            else ""
        )
        advice = (
            f"Unknown fields are refused, not ignored ({schema}, additionalProperties: "
            "false): move anything extra into reasoning (free text) or cost (structured spend)."
            if unknown
            else f"The contract is {schema}."
        )
        raise AgentProtocolFault(
            f"{lead}: {said}{listed}. {advice}",
            field=unknown.group(1) if unknown else None,
            path=path,
        ) from None
    except msgspec.DecodeError as exc:
        raise AgentProtocolFault(f"{lead}: not one JSON object ({exc}) ({schema})") from None
    tag = root.__struct_config__.tag
    if isinstance(tag, str) and msgspec.json.decode(text).get("type") != tag:
        # a tagged message says what it is: its type is part of it, never guessed
        raise AgentProtocolFault(
            f'{lead}: its "type" must be "{tag}" ({schema})', field="type", path="$"
        )
    return message


def validate_for(
    decision: sharpebench.Decision, observation: sharpebench.MarketObservation
) -> None:
    """What a sharpebench decision may say about the observation it answers: every
    order's symbol observed and named once, its weight finite in [-1, 1], its confidence
    finite in [0, 1], the cost finite and not negative."""
    observed = {s.symbol for s in observation.symbols}
    seen: set[str] = set()
    for n, order in enumerate(decision.orders):
        where = f"orders[{n}]"
        if order.symbol not in observed:
            _invalid(f'{where}.symbol "{order.symbol}" was not observed', f"$.{where}.symbol")
        if order.symbol in seen:
            _invalid(f'duplicate order for symbol "{order.symbol}"', f"$.{where}.symbol")
        seen.add(order.symbol)
        if not math.isfinite(order.target_weight) or abs(order.target_weight) > 1:
            _invalid(f"{where}.target_weight must be finite and in [-1, 1]", f"$.{where}")
        confidence = order.confidence
        if not isinstance(confidence, UnsetType) and not (
            math.isfinite(confidence) and 0 <= confidence <= 1
        ):
            _invalid(f"{where}.confidence must be finite and in [0, 1]", f"$.{where}")
    cost = decision.cost
    if not isinstance(cost, UnsetType) and not (
        math.isfinite(cost.cost_usd) and cost.cost_usd >= 0
    ):
        _invalid("cost.cost_usd must be finite and not negative", "$.cost")


def _invalid(message: str, path: str) -> None:
    raise AgentProtocolFault(
        f"the decision is not valid for the observation it answers: {message}", path=path
    )
