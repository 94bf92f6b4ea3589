"""The agent contract: a task and a toolbox in, a decision out."""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from harness.agents.external import External
    from harness.tools.toolbox import Toolbox


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
    # a trade task for an agent speaking sharpebench's dialect: the MarketObservation
    # the harness built for this bell (wire form), and which of its symbols are held
    observation: dict[str, Any] | None = None
    held: tuple[str, ...] = ()
    # a trade task in our dialect: the open positions as shown, (row key, units) in the
    # order they were first bought; one unit per pick still within its hold
    positions: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Decision:
    picks: tuple[str, ...] = ()
    text: str = ""
    # an external agent's decision as the dialect's closed type read it (sharpebench:
    # the orders and the cost report), which the runner scores from
    wire: dict[str, Any] | None = None

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
    """A named way to make a fresh agent; the runner makes one per cell.

    ``ref`` is set for an agent named by reference (``stub`` or ``module:attribute``):
    a sandboxed run imports it by that name inside the agent's own process, so its
    import-time code runs confined too. An agent without one travels by value.
    """

    name: str
    factory: Callable[[], Agent]
    ref: str | None = None
    # the file the agent's code comes from, where known (its sha256 is recorded)
    source: str | None = None
    # an agent in another process (``harness.agents.external``): how it is reached
    external: External | None = None
    _resolved: list[AgentSpec] = field(default_factory=list, repr=False, compare=False)

    def new(self) -> Agent:
        return self.factory()

    def source_sha256(self) -> str | None:
        """sha256 of the agent's module source, where there is a file to read: a
        function typed into a REPL or built by ``exec`` has none. An external agent's is
        its digest (``External.digest``: its argv and the files it names)."""
        if self.external is not None:
            return self.external.digest()
        path = self.source or source_file(self.factory)
        if path is None:
            return None
        try:
            return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            return None

    def resolved(self) -> AgentSpec:
        """The spec a reference names, imported (once) in this process."""
        if self.ref is None or self.ref == "stub":
            return self
        if not self._resolved:
            self._resolved.append(_import_ref(self.ref))
        return self._resolved[0]


def source_file(obj: object) -> str | None:
    """The source file that defines ``obj`` (a function or a class), if it is a file."""
    try:
        path = inspect.getsourcefile(obj)  # type: ignore[arg-type]
    except TypeError:
        return None
    return path if path and Path(path).is_file() else None


def as_agent(agent: AgentSpec | Callable[..., Any] | str) -> AgentSpec:
    """What ``run`` accepts as an agent: an AgentSpec, a plain ``fn(prompt, tools)``,
    or a name (``stub``, ``module:attribute``)."""
    if isinstance(agent, AgentSpec):
        return agent
    if isinstance(agent, str):
        return load_agent(agent)
    if callable(agent):
        from harness.agents.adapters.plain import from_callable

        return from_callable(agent)
    raise TypeError(
        f"agent: expected an AgentSpec, a callable fn(prompt, tools) or a name, "
        f"got {type(agent).__name__}"
    )


class AgentLoadError(ImportError):
    """A named agent's code could not be imported (the agent's fault, not a usage error)."""


def _import_ref(name: str) -> AgentSpec:
    module_name, _, attr = name.partition(":")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except AttributeError as exc:
        raise AgentLoadError(f"agent {name!r}: {exc}") from None
    if isinstance(target, AgentSpec):
        return AgentSpec(target.name, target.factory, ref=name, source=target.source)
    if callable(target):
        from harness.agents.adapters.plain import from_callable

        spec = from_callable(target, name=name)
        return AgentSpec(spec.name, spec.factory, ref=name, source=spec.source)
    raise AgentLoadError(f"agent {name!r}: not an AgentSpec or a callable")


def locate_module(module_name: str) -> ModuleSpec | None:
    """Find a module without importing it or its parent packages."""
    parts = module_name.split(".")
    spec = importlib.machinery.PathFinder.find_spec(parts[0]) or importlib.util.find_spec(parts[0])
    for n in range(1, len(parts)):
        if spec is None or not spec.submodule_search_locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(
            ".".join(parts[: n + 1]), list(spec.submodule_search_locations)
        )
    return spec


def load_agent(name: str) -> AgentSpec:
    """``stub``, or ``package.module:attribute`` naming an AgentSpec or a plain
    ``fn(prompt, tools)`` callable. The module is located here and imported only
    when an agent is first made: in a sandboxed run, inside the agent's process."""
    if name == "stub":
        from harness.agents.stub import stub

        return stub()
    module_name, _, attr = name.partition(":")
    if not module_name or not attr:
        raise ValueError(f"agent {name!r}: use 'stub' or 'package.module:attribute'")
    found = locate_module(module_name)
    if found is None:
        raise ValueError(f"agent {name!r}: no module named {module_name!r} on the Python path")

    def factory() -> Agent:
        return spec.resolved().new()

    origin = found.origin if found.has_location else None
    spec = AgentSpec(name, factory, ref=name, source=origin)
    return spec
