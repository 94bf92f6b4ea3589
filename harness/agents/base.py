"""The agent contract: a task and a toolbox in, a decision out."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from harness.tools import Toolbox


@dataclass(frozen=True)
class Task:
    """One question for the agent. ``kind`` is ``trade`` (pick filings to buy at
    this session's open) or ``probe`` (say the real date and issuer of a row)."""

    kind: str
    prompt: str
    arm: str
    clock: str
    session_date: str  # as the arm shows it (shifted on the shifted arm)
    known_at: str  # the opening bell, as the arm shows it


@dataclass(frozen=True)
class Decision:
    picks: tuple[str, ...] = ()
    text: str = ""

    @classmethod
    def coerce(cls, value: Any) -> Decision:
        """Accept what a plain function naturally returns."""
        if isinstance(value, Decision):
            return value
        if value is None:
            return cls()
        if isinstance(value, str):
            return cls(text=value)
        if isinstance(value, dict):
            picks = value.get("picks", ())
            text = value.get("text", "")
            return cls(tuple(picks) if isinstance(picks, (list, tuple)) else (picks,), str(text))
        if isinstance(value, (list, tuple)):
            return cls(picks=tuple(value), text=" ".join(str(v) for v in value))
        raise TypeError(
            f"agent returned {type(value).__name__}; expected a list of row_key, a str or a dict"
        )


class Agent(Protocol):
    def decide(self, task: Task, tools: Toolbox) -> Decision: ...


@dataclass(frozen=True)
class AgentSpec:
    """A named way to make a fresh agent; the runner makes one per cell."""

    name: str
    factory: Callable[[], Agent]

    def new(self) -> Agent:
        return self.factory()


def load_agent(name: str) -> AgentSpec:
    """``stub``, or ``package.module:attribute`` naming an AgentSpec or a plain
    ``fn(prompt, tools)`` callable."""
    if name == "stub":
        from harness.agents.stub import stub

        return stub()
    module_name, _, attr = name.partition(":")
    if not module_name or not attr:
        raise ValueError(f"agent {name!r}: use 'stub' or 'package.module:attribute'")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"agent {name!r}: cannot import ({exc})") from None
    if isinstance(target, AgentSpec):
        return target
    if callable(target):
        from harness.adapters.plain import from_callable

        return from_callable(target, name=name)
    raise ValueError(f"agent {name!r}: not an AgentSpec or a callable")
