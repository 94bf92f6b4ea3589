"""Our own dialect (``pit/1``): what an external agent and the harness say to each other
in one cell, the same exchange the sandbox's pipe carries for a Python agent.

The harness sends a ``Task`` (a trading decision at one session's opening bell, or a mask
probe question), then a ``ToolResult`` for each ``ToolCall`` the agent makes; the agent
ends each task with its ``Decision``: the row keys it picks (a trade task) and free text
(the probe's answer is the text). Every message carries its ``type``; every object is
closed. ``OPERATIONS`` says of each message whether it changes state, is safe to repeat
and may be retried, as sharpebench publishes beside its schema."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from harness.vocabulary import Arm, Clock, ToolName

VERSION = "pit/1"
RowKey = Annotated[str, Meta(min_length=1, max_length=64)]


class Message(msgspec.Struct, forbid_unknown_fields=True, tag_field="type"):
    """A message of the ``pit/1`` dialect."""


class Position(msgspec.Struct, forbid_unknown_fields=True):
    """One open position as the task shows it: a row the agent bought within its hold
    and how many units of it are open (one per pick). Under a fault plan (seed 002) that
    declares read_your_writes, positions may be shown at their values before the last
    pick executed, for a bounded number of steps; under a plan that
    declares position_sign_convention, a nonzero ``units`` may be shown with its sign
    flipped. The book itself never changes."""

    row_key: RowKey
    units: float


class Task(Message, tag="task", omit_defaults=True):
    """Harness to agent: one question, asked at one session's opening bell. A trade
    task shows the open positions (``positions``; absent when none is open, and on a
    probe). Under a fault plan that declares submission_acceptance, a decision with
    picks may be refused by presenting the identical task again, a bounded number of
    times; the decision answering the first task after that is the one taken."""

    kind: Literal["trade", "probe"]
    prompt: str
    arm: Arm
    clock: Clock
    session_date: str  # as the arm shows it: ten years on, on the shifted arm
    known_at: str  # the opening bell, as the arm shows it
    newly_knowable: Annotated[int, Meta(ge=0)]
    positions: Annotated[list[Position], Meta(max_length=100_000)] = []


class ToolCall(Message, tag="tool"):
    """Agent to harness: call one of the four tools (``pit_list``, ``pit_search``,
    ``pit_read``, ``pit_coverage``) with its arguments."""

    tool: ToolName
    args: dict[str, Any] = {}


class ToolResult(Message, tag="result"):
    """Harness to agent: the tool's whole answer (every answer carries ``known_at``,
    ``clock``, ``arm`` and ``session_date``)."""

    result: dict[str, Any]


class Decision(Message, tag="decision"):
    """Agent to harness: the task's answer. ``picks``: row keys to buy at this session's
    open (a trade task; unknown or not yet knowable keys are refused and counted);
    ``text``: free text (the probe's answer; audit text on a trade task)."""

    picks: Annotated[list[RowKey], Meta(max_length=1000)] = []
    text: str = ""


ToAgent = Task | ToolResult
FromAgent = ToolCall | Decision


class Step(msgspec.Struct, forbid_unknown_fields=True):
    """Over HTTP, each message to the agent is one ``POST /step``: this body in, the
    agent's next message (``FromAgent``) out. ``session`` names one cell's agent (a fresh
    one for every cell and attempt); ``step`` counts its messages from 1. The harness may
    send a step again after a transport error: the agent must answer it identically."""

    session: Annotated[str, Meta(min_length=1, max_length=64)]
    step: Annotated[int, Meta(ge=1)]
    message: ToAgent


# message -> (changes state, safe to repeat, may be retried by the harness)
OPERATIONS: dict[str, dict[str, bool]] = {
    "task": {"changes_state": False, "idempotent": True, "retryable": True},
    "tool": {"changes_state": False, "idempotent": True, "retryable": True},
    "result": {"changes_state": False, "idempotent": True, "retryable": True},
    "decision": {"changes_state": True, "idempotent": True, "retryable": False},
}
WIRE_TYPES = (Task, Position, ToolCall, ToolResult, Decision, Step)
