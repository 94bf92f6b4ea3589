"""The messages on the sandbox's pipes, as types that refuse unknown fields.

Two kinds of pipe carry them (``channel``): the zygote's control pipe, and each cell's
own socket. Every message is one JSON object whose ``op`` names its type. Reading a
message as its pipe's union (``read``) refuses an ``op`` the pipe does not carry, a field
its type lacks and a value of the wrong type, naming which; ``wire`` gives the object the
pipe has always carried: ``op`` first, then the fields in their declared order.

Both sides of the sandbox import this module, so it imports nothing but the standard
library and msgspec.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Message(msgspec.Struct, forbid_unknown_fields=True, tag_field="op"):
    def wire(self) -> dict[str, Any]:
        """The message as the JSON object the channel sends."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


class _Fields(msgspec.Struct, forbid_unknown_fields=True):
    pass


class Attempt(_Fields):
    """An egress attempt the cell's guard saw (``EgressAttempt.to_json``)."""

    call: str
    target: str
    site: str
    stack: list[str] = []


class TaskFields(_Fields, omit_defaults=True):
    """What the agent is told of one decision (``harness.agents.base.Task``)."""

    kind: str
    prompt: str
    arm: str
    clock: str
    session_date: str
    known_at: str
    observation: dict[str, Any] | None = None
    held: list[str] = []
    positions: list[tuple[str, float]] = []


# -- the control pipe: harness -> zygote ---------------------------------------------


class OpenCell(Message, tag="cell"):
    limits: dict[str, Any]


class Kill(Message, tag="kill"):
    pass


class Quit(Message, tag="quit"):
    pass


class AskTreeLimits(Message, tag="tree_limits"):
    pass


# -- the control pipe: zygote -> harness ---------------------------------------------


class Hello(Message, tag="hello"):
    pid: int


class TreeLimitsHeld(Message, tag="tree_limits"):
    held: dict[str, bool]


class CellExit(Message, tag="cell_exit"):
    code: int | None


# -- a cell's socket: harness (or zygote) -> cell ------------------------------------


class Probe(Message, tag="probe"):
    hidden: list[str]


class ProbeLimit(Message, tag="probe_limit"):
    limit: str


class Load(Message, tag="load", omit_defaults=True):
    agent: dict[str, Any]
    policy: str
    relay: dict[str, Any] | None
    wire_held: bool = False  # the harness holds the cell's wire: the guard observes, never refuses


class TaskRequest(Message, tag="task"):
    task: TaskFields
    newly_knowable: int


class ToolResult(Message, tag="result"):
    result: dict[str, Any]


class End(Message, tag="end"):
    pass


# -- a cell's socket: cell -> harness ------------------------------------------------


class Capabilities(Message, tag="capabilities"):
    """What the probe cell found (``inside.probe``)."""

    uid: int
    capabilities_dropped: bool
    network_isolated: bool
    filesystem_confined: bool
    pid_isolated: bool
    namespaces_private: bool
    tmp_private: bool
    processes_hidden: bool
    nothing_shared_writable: bool
    per_process_limits: dict[str, bool]
    open_files_enforced: bool
    environment: list[str]


class SetupFailed(Message, tag="setup_failed"):
    message: str


class Ready(Message, tag="ready"):
    attempts: list[Attempt]


class ToolCall(Message, tag="tool"):
    tool: str
    args: dict[str, Any]

    def wire(self) -> dict[str, Any]:
        # the agent's own values, as they are: json alone decides whether they travel
        return {"op": "tool", "tool": self.tool, "args": self.args}


class Decided(Message, tag="decision", omit_defaults=True):
    picks: list[str | None]
    bad: dict[str, str]
    text: str
    attempts: list[Attempt]
    wire_decision: dict[str, Any] | None = None


class DecisionError(Message, tag="decision_error"):
    message: str
    attempts: list[Attempt]


class AgentError(Message, tag="agent_error"):
    kind: str
    message: str
    attempts: list[Attempt]


class AgentExited(Message, tag="agent_exited"):
    """An external agent's process exited or closed its pipe mid-cell (a runtime
    failure: the cell is run again), and how."""

    message: str
    attempts: list[Attempt]


class Abort(Message, tag="abort"):
    attempts: list[Attempt]
    site: str


# What each pipe carries, each way.
ToZygote = OpenCell | Kill | Quit | AskTreeLimits
FromZygote = Hello | TreeLimitsHeld | CellExit
ToCell = Probe | ProbeLimit | Load | TaskRequest | ToolResult | End
FromCell = (
    Capabilities
    | SetupFailed
    | Ready
    | ToolCall
    | Decided
    | DecisionError
    | AgentError
    | AgentExited
    | Abort
)


class MessageError(ValueError):
    """A message that is not one its pipe carries (the text names the field)."""


def read(value: dict[str, Any], kind: Any) -> Any:
    """``value`` (a decoded JSON object) as one of the union ``kind``'s types."""
    try:
        return msgspec.convert(value, type=kind)
    except msgspec.ValidationError as exc:
        raise MessageError(f"a malformed {str(value.get('op'))[:40]!r} message: {exc}") from None
