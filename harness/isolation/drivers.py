"""How the runner reaches an agent: in its own sandboxed process (the default), or in
this process behind the socket guard (the fallback, and said so).

Both give the runner the same ``CellAgent`` for each cell, raising only the taxonomy of
``harness.outcomes`` (and ``NetworkAbort`` under the ``abort`` policy), and both report
what they enforce as receipt fields and as one line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from harness import outcomes
from harness.agents.base import Agent, AgentSpec, Decision, Task
from harness.isolation.egress import (
    INSIDE,
    RELAY_PORT,
    SOCKET_NAME,
    ModelProxy,
    Replay,
    relay_environment,
)
from harness.isolation.guard import (
    GUARD_NAME,
    GUARD_SCOPE,
    EgressAttempt,
    NetworkAbort,
    NetworkGuard,
)
from harness.isolation.sandbox import limits as tree_limits
from harness.isolation.sandbox import outside
from harness.isolation.sandbox.wire import WireAttempt
from harness.receipt.build import wire_counts
from harness.rundata.config import ConfigError, RunConfig
from harness.rundata.endpoints import parse_endpoint

if TYPE_CHECKING:
    from harness.isolation.templates import Templates
    from harness.tools.toolbox import Toolbox

ISOLATED, IN_PROCESS = "isolated", "in_process"
ISOLATED_GUARD = "network-namespace"
ISOLATED_SCOPE = (
    "the agent's process tree runs in its own network namespace with only a loopback "
    "interface, so nothing it or a subprocess does can leave the machine; the socket guard "
    "inside the sandbox records Python-level attempts with their call site, while attempts "
    "made around it (raw _socket, ctypes, subprocesses) fail without a record"
)
WIRE_GUARD = "network-namespace+wire"
WIRE_SCOPE = (
    "the agent's process tree runs in its own network namespace whose only way off loopback "
    "is a device the harness holds outside the agent's reach: every packet to any other "
    "address is counted there (protocol, address, port, time) and refused; the socket guard "
    "inside the sandbox only adds call sites"
)
# The capability line's fields, in order.
LINE_FIELDS = (
    "agent_process",
    "network_isolated",
    "filesystem_confined",
    "pid_isolated",
    "capabilities_dropped",
    "memory_enforced",
    "cpu_enforced",
    "processes_enforced",
    "open_files_enforced",
    "cells_isolated",
    "harness_state_protected",
)
_EXPLAIN = {
    "network_isolated": "network: the agent's process could reach the network",
    "filesystem_confined": "filesystem: the agent's process could read the host's files, "
    "including the release, price files and outputs",
    "pid_isolated": "processes: the agent could see and signal the harness's processes",
    "capabilities_dropped": "privileges: the agent's process kept Linux capabilities",
    "memory_enforced": "memory: no memory limit held for the agent's whole process tree "
    "(its subprocesses together could use more)",
    "cpu_enforced": "cpu: no CPU-time limit held for the agent's whole process tree "
    "(its subprocesses together could use more)",
    "processes_enforced": "process count: no limit held on how many processes the agent's "
    "process tree holds at once",
    "open_files_enforced": "files: no open-file limit held for the agent's process",
    "cells_isolated": "cells: state (globals, files, environment, sockets, IPC) can cross "
    "from one cell or attempt "
    "to the next, so an agent could replay main-arm picks on a control arm",
    "harness_state_protected": "harness state: the agent shares the harness's memory; picks "
    "are checked against the runner's own clock state and rederive re-checks every pick from "
    "the release, but an in-process agent could reach that state",
}


class HasAttempts(Protocol):
    def take_attempts(self) -> Sequence[EgressAttempt | WireAttempt]: ...


class CellAgent(HasAttempts, Protocol):
    def decide(self, task: Task, tools: Toolbox) -> Decision: ...

    def close(self) -> None: ...


@dataclass
class _Pending:
    """Egress attempts from an agent that failed to start."""

    attempts: list[EgressAttempt | WireAttempt] = field(default_factory=list)

    def take_attempts(self) -> list[EgressAttempt | WireAttempt]:
        taken, self.attempts = self.attempts, []
        return taken


class Drivers(Protocol):
    mode: str
    name: str

    def ready(self) -> None: ...

    def open(self) -> CellAgent: ...

    def orphan_attempts(self) -> _Pending: ...

    def capabilities(self) -> dict[str, Any]: ...

    def network_block(
        self, attempts: list[EgressAttempt], wire: list[dict[str, Any]]
    ) -> dict[str, Any]: ...

    def model_traffic(self) -> tuple[list[dict[str, Any]], list[EgressAttempt]]: ...


def capability_line(fields: dict[str, Any]) -> str:
    return " ".join(f"{k}={fields[k]}" for k in LINE_FIELDS if k in fields)


def not_enforced(fields: dict[str, Any]) -> list[str]:
    """One line for every capability that did not hold: what the run cannot promise."""
    return [_EXPLAIN[k] for k in LINE_FIELDS[1:] if fields.get(k) is False]


def _network_block(
    guard: str,
    scope: str,
    policy: str,
    attempts: list[EgressAttempt],
    proxy: ModelProxy | None = None,
) -> dict[str, Any]:
    model: dict[str, Any]
    if proxy is None:
        model = {"endpoints": [], "exchanges": {}, "line": "model_egress=none"}
    else:
        labels = sorted(e.label for e in proxy.endpoints)
        model = {
            "endpoints": labels,
            "exchanges": {},  # the runner counts what it wrote into the trajectory
            "line": "model_egress=" + ",".join(f"{label}(recorded)" for label in labels),
        }
    return {
        "guard": guard,
        "policy": policy,
        "clean": not attempts,
        "egress_attempts": len(attempts),
        "attempts": [a.to_json() for a in attempts],
        "scope": scope,
        "model_egress": model,
    }


# -- in-process --------------------------------------------------------------------------


class _Interrupts:
    """Tells a real Ctrl-C apart from an agent that raises KeyboardInterrupt itself."""

    def __init__(self) -> None:
        self.real = False
        self._previous: Any = None

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.real = True
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


class InProcessAgent:
    def __init__(self, spec: AgentSpec, guard: NetworkGuard, interrupts: _Interrupts) -> None:
        self._guard = guard
        self._seen = len(guard.attempts)
        self._interrupts = interrupts
        try:
            resolved = spec.resolved()
        except (NetworkAbort, outcomes.AgentFault):
            raise
        except BaseException as exc:
            self._reraise_real(exc)
            raise outcomes.AgentFault(outcomes.LOAD_FAILED, outcomes.error_text(exc)) from None
        self._agent: Agent = self._call(resolved.new, outcomes.CONSTRUCTOR_RAISED)

    def _reraise_real(self, exc: BaseException) -> None:
        if isinstance(exc, KeyboardInterrupt) and self._interrupts.real:
            raise exc

    def _call(self, fn: Any, kind: str, *args: Any) -> Any:
        try:
            return fn(*args)
        except (NetworkAbort, outcomes.AgentFault, outcomes.RuntimeFailure):
            raise  # an external agent's fault, or its process exiting, as it was said
        except MemoryError as exc:
            raise outcomes.AgentFault(outcomes.RESOURCE_LIMIT, outcomes.error_text(exc)) from None
        except Exception as exc:
            raise outcomes.AgentFault(kind, outcomes.error_text(exc)) from None
        except BaseException as exc:
            self._reraise_real(exc)
            raise outcomes.AgentFault(outcomes.AGENT_EXIT, outcomes.error_text(exc)) from None

    def decide(self, task: Task, tools: Toolbox) -> Decision:
        value = self._call(self._agent.decide, outcomes.DECISION_RAISED, task, tools)
        try:
            return Decision.coerce(value)
        except TypeError as exc:
            raise outcomes.AgentFault(outcomes.DECISION_RAISED, outcomes.error_text(exc)) from None

    def take_attempts(self) -> list[EgressAttempt]:
        new = self._guard.attempts[self._seen :]
        self._seen = len(self._guard.attempts)
        return new

    def close(self) -> None:
        """An agent that holds something (an external agent's process) lets it go."""
        close = getattr(self._agent, "close", None)
        if callable(close):
            self._call(close, outcomes.DECISION_RAISED)


class InProcessDrivers:
    mode = IN_PROCESS

    def __init__(self, spec: AgentSpec, config: RunConfig, reason: str) -> None:
        self.name = spec.name
        self._spec = spec
        self._policy = config.network_policy
        self._reason = reason
        self.guard = NetworkGuard(config.network_policy)
        self.interrupts = _Interrupts()
        self._pending = _Pending()

    def ready(self) -> None:
        """Nothing to wait for in process."""

    def open(self) -> CellAgent:
        seen = len(self.guard.attempts)
        try:
            return InProcessAgent(self._spec, self.guard, self.interrupts)
        except (outcomes.AgentFault, NetworkAbort):
            self._pending.attempts += self.guard.attempts[seen:]
            raise

    def orphan_attempts(self) -> _Pending:
        return self._pending

    def capabilities(self) -> dict[str, Any]:
        fields: dict[str, Any] = {k: False for k in LINE_FIELDS}
        fields["agent_process"] = IN_PROCESS
        fields["limits_scope"] = None
        fields["sandbox"] = None
        fields["isolation_unavailable"] = self._reason
        return {**fields, "line": capability_line(fields)}

    def network_block(
        self, attempts: list[EgressAttempt], wire: list[dict[str, Any]]
    ) -> dict[str, Any]:
        return _network_block(GUARD_NAME, GUARD_SCOPE, self._policy, attempts)

    def model_traffic(self) -> tuple[list[dict[str, Any]], list[EgressAttempt]]:
        return [], []  # an in-process run has no model proxy (endpoints need the sandbox)


# -- remote ------------------------------------------------------------------------------

REMOTE = "remote"
REMOTE_GUARD = "none"
REMOTE_SCOPE = (
    "the agent is an HTTP service outside the harness: no guard of the harness reaches its "
    "process, so its network, files and memory are its operator's; the harness only reads "
    "its answers"
)


class RemoteAgent:
    """An HTTP agent as the runner's CellAgent: the harness calls it; it calls nothing of
    the harness's but the tools the protocol carries."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent

    def decide(self, task: Task, tools: Toolbox) -> Decision:
        try:
            decision: Decision = self._agent.decide(task, tools)
        except (outcomes.AgentFault, outcomes.RuntimeFailure):
            raise
        except Exception as exc:  # the transport's own failure is the harness's side
            raise outcomes.RuntimeFailure(outcomes.error_text(exc)) from None
        return decision

    def take_attempts(self) -> list[EgressAttempt]:
        return []  # nothing of its egress is seen from here (REMOTE_SCOPE)

    def close(self) -> None:
        self._agent.close()


class RemoteDrivers:
    mode = REMOTE

    def __init__(self, spec: AgentSpec, config: RunConfig) -> None:
        self.name = spec.name
        self._spec = spec
        self._policy = config.network_policy
        self._pending = _Pending()

    def ready(self) -> None:
        """Nothing to start: the agent is already served elsewhere."""

    def open(self) -> CellAgent:
        return RemoteAgent(self._spec.new())

    def orphan_attempts(self) -> _Pending:
        return self._pending

    def capabilities(self) -> dict[str, Any]:
        fields: dict[str, Any] = {k: False for k in LINE_FIELDS}
        fields["agent_process"] = REMOTE
        fields["harness_state_protected"] = True  # it holds none of the harness's memory
        fields["limits_scope"] = None
        fields["sandbox"] = None
        external = self._spec.external
        fields["isolation_unavailable"] = (
            f"the agent is an HTTP service at {external.url if external else '?'}, outside the "
            "harness's sandbox"
        )
        return {**fields, "line": capability_line(fields)}

    def network_block(
        self, attempts: list[EgressAttempt], wire: list[dict[str, Any]]
    ) -> dict[str, Any]:
        return _network_block(REMOTE_GUARD, REMOTE_SCOPE, self._policy, attempts)

    def model_traffic(self) -> tuple[list[dict[str, Any]], list[EgressAttempt]]:
        return [], []


# -- isolated ----------------------------------------------------------------------------

# How an isolated run's cells start (the receipt's ``cell_start``): each is forked from a
# template process, the zygote, that never runs agent code, into fresh namespaces, limits
# and filesystem view. The template may serve more than one run (a site's worker keeps
# one: ``harness.isolation.templates``); a cell is started the same way either way.
CELL_START = "forked_from_template"

# The capability field of each limit held for the whole process tree.
_TREE_FIELDS = {
    tree_limits.MEMORY: "memory_enforced",
    tree_limits.CPU: "cpu_enforced",
    tree_limits.PROCESSES: "processes_enforced",
}


def tree_fields(found: dict[str, Any]) -> dict[str, bool]:
    """Each tree limit's field: True only where the probe saw a tree that passed it (its
    processes together, none alone) killed for it. A limit held per process alone (an
    address-space or CPU-time rlimit) does not hold for the tree and reads False."""
    held = found.get("tree_limits") or {}
    return {field: held.get(which) is True for which, field in _TREE_FIELDS.items()}


def limits_scope(found: dict[str, Any]) -> str | None:
    """How the limits applied: to the whole tree by accounting across it, to each
    process alone (the tree's accounting did not hold), or not at all."""
    if all(tree_fields(found).values()):
        return tree_limits.SCOPE
    if any((found.get("per_process_limits") or {}).values()):
        return "per_process"
    return None


class IsolatedDrivers:
    mode = ISOLATED

    def __init__(
        self,
        spec: AgentSpec,
        config: RunConfig,
        sandbox: outside.Sandbox,
        payload: Any,
        proxy: ModelProxy | None = None,
    ) -> None:
        self.name = spec.name
        self._policy = config.network_policy
        self.sandbox = sandbox
        self._payload = payload
        self._pending = _Pending()
        self.proxy = proxy
        self._relay: dict[str, Any] | None = None
        if proxy is not None:
            passed = {name: os.environ[name] for name in config.pass_env}
            # the recorded settings (never a name the sandbox sets), the way out, the keys
            self._relay = {
                "port": RELAY_PORT,
                "socket": f"{INSIDE}/{SOCKET_NAME}",
                "environment": {**dict(config.agent_env), **relay_environment(), **passed},
            }

    def ready(self) -> None:
        """Wait for the sandbox launched by ``open_drivers`` and run its probe cell; the
        runner calls this once its own set-up is done, so the two overlap."""
        try:
            self.sandbox.start()
            if not self.sandbox.probed:  # a kept template's findings still hold
                self.sandbox.probe()
        except outside.SandboxError as exc:
            raise ConfigError(str(exc)) from None

    def open(self) -> CellAgent:
        try:
            return self.sandbox.open_cell(self._payload, self._policy, self._relay)
        except (outcomes.AgentFault, NetworkAbort) as exc:
            cell = getattr(exc, "cell", None)
            if cell is not None:
                self._pending.attempts += cell.take_attempts()
            raise

    def orphan_attempts(self) -> _Pending:
        return self._pending

    def capabilities(self) -> dict[str, Any]:
        found = self.sandbox.capabilities
        settings = self.sandbox.settings
        fields: dict[str, Any] = {
            "agent_process": ISOLATED,
            "network_isolated": bool(found.get("network_isolated")),
            "filesystem_confined": bool(found.get("filesystem_confined")),
            "pid_isolated": bool(found.get("pid_isolated")),
            "capabilities_dropped": bool(found.get("capabilities_dropped"))
            and found.get("uid") == outside.SANDBOX_UID,
            **tree_fields(found),
            "open_files_enforced": bool(found.get("open_files_enforced")),
            "cells_isolated": bool(found.get("tmp_private"))
            and bool(found.get("nothing_shared_writable"))
            and bool(found.get("processes_hidden"))
            and bool(found.get("namespaces_private")),
            "harness_state_protected": True,
        }
        return {
            **fields,
            "cell_start": CELL_START,
            "limits_scope": limits_scope(found),
            "sandbox": "bubblewrap",
            "uid": found.get("uid"),
            "environment": found.get("environment"),
            "limits": {
                "memory_bytes": settings.memory_bytes,
                "cpu_seconds": settings.cpu_seconds,
                "max_processes": settings.max_processes,
                "open_files": settings.open_files,
                "decision_timeout": settings.decision_timeout,
            },
            "line": capability_line(fields),
        }

    def network_block(
        self, attempts: list[EgressAttempt], wire: list[dict[str, Any]]
    ) -> dict[str, Any]:
        if not self.sandbox.wire_held:
            block = _network_block(
                ISOLATED_GUARD, ISOLATED_SCOPE, self._policy, attempts, self.proxy
            )
            return {**block, "counted": "guard"}
        block = _network_block(WIRE_GUARD, WIRE_SCOPE, self._policy, attempts, self.proxy)
        return {**block, **wire_counts([a.to_json() for a in attempts], wire)}

    def model_traffic(self) -> tuple[list[dict[str, Any]], list[EgressAttempt]]:
        return self.proxy.take() if self.proxy is not None else ([], [])


def _mode(config: RunConfig) -> tuple[str, str]:
    """Isolated or in process, and why not isolated where it is not."""
    mode = config.agent_process
    reason = "in-process run requested (agent_process=in_process)"
    if mode != IN_PROCESS:
        available, why = outside.availability()
        if available:
            mode = ISOLATED
        elif mode == ISOLATED:
            raise ConfigError(f"agent_process=isolated, but {why}")
        else:
            mode, reason = IN_PROCESS, why
    if mode == IN_PROCESS and config.model_endpoints:
        raise ConfigError(
            "model_endpoints need the agent's sandbox (its only way out is the recording "
            f"proxy), and this run would be in process: {reason}"
        )
    return mode, reason


def agent_process(spec: AgentSpec, config: RunConfig) -> str:
    """Where ``open_drivers`` will run the agent (``isolated``, ``in_process`` or
    ``remote``), found without starting anything: a checkpoint's contract, which the run's
    identity is part of, is checked before a run starts. Refused as ``open_drivers``
    refuses a mode it cannot have."""
    if spec.external is not None and spec.external.transport == "http":
        return REMOTE
    return _mode(config)[0]


def _payload(spec: AgentSpec, shut: list[str]) -> outside.AgentPayload:
    """How the cells get the agent; refused if it would show what the agent never sees
    (``shut``: the release's folder, the price file, this run's outputs)."""
    try:
        payload = outside.agent_payload(spec)
    except outside.SandboxError as exc:
        raise ConfigError(str(exc)) from None
    _refuse_shut([src for src, _ in payload.binds], shut)
    return payload


def _refuse_shut(paths: list[str], shut: list[str]) -> None:
    for src in paths:
        closed = next((h for h in shut if outside.under(src, os.path.realpath(h))), None)
        if closed is not None:
            raise ConfigError(
                f"the agent's command names {src}, which is {closed} or lies in it: the "
                "release, the prices and the run's outputs are never shown to the agent"
            )


@contextlib.contextmanager
def open_drivers(
    spec: AgentSpec,
    config: RunConfig,
    *,
    hidden: list[str],
    settings: outside.SandboxSettings,
    replay: Replay | None = None,
    shut: list[str] | None = None,
    templates: Templates | None = None,
) -> Iterator[Drivers]:
    """The run's way to its agent, for as long as the run lasts. ``hidden`` is masked
    wherever the sandbox shows a folder holding it; ``shut`` (by default ``hidden``) is
    what an agent's command may not name. With ``templates`` an isolated run without a
    model proxy takes its sandbox from them and gives it back if the run ends cleanly."""
    if spec.external is not None and spec.external.transport == "http":
        if config.agent_process != "auto" or config.model_endpoints:
            raise ConfigError(
                "an HTTP agent runs outside the harness's sandbox (agent_process=remote): "
                "leave agent_process at auto and give it no model_endpoints"
            )
        yield RemoteDrivers(spec, config)
        return
    mode, reason = _mode(config)
    if spec.external is not None:  # refused wherever it would run
        _refuse_shut(list(spec.external.paths), hidden if shut is None else shut)
    if mode == IN_PROCESS:
        drivers = InProcessDrivers(spec, config, reason)
        with drivers.interrupts, drivers.guard:
            yield drivers
        return
    payload = _payload(spec, hidden if shut is None else shut)
    missing = [name for name in config.pass_env if name not in os.environ]
    if missing:
        raise ConfigError(f"pass_env: {', '.join(missing)} not set in the environment")
    secrets = [os.environ[name] for name in config.pass_env if os.environ[name]]
    told = [name for name, value in config.agent_env if any(s in value for s in secrets)]
    if told:  # the receipt records agent_env: a key inside a setting would be written down
        raise ConfigError(
            f"agent_env: {', '.join(told)} holds a pass_env variable's value, which the "
            "receipt would record"
        )
    proxy = None
    binds = payload.binds
    if config.model_endpoints:
        proxy = ModelProxy(
            tuple(parse_endpoint(e) for e in config.model_endpoints),
            upstream_ca_file=config.model_ca_file,
            secrets=tuple(os.environ[name] for name in config.pass_env),
            replay=replay,
        )
        try:
            proxy.start()
        except (OSError, ValueError) as exc:
            proxy.stop()
            raise ConfigError(f"the model proxy could not start: {exc}") from None
        binds = (*binds, (str(proxy.folder), INSIDE))
    by_value = payload.message["kind"] == "pickle"
    kept = templates if proxy is None else None
    if kept is not None:
        sandbox = kept.take(binds=binds, hidden=hidden, settings=settings, by_value=by_value)
    else:
        sandbox = outside.Sandbox(binds=binds, hidden=hidden, settings=settings, by_value=by_value)
    clean = False
    try:
        sandbox.launch()
        yield IsolatedDrivers(spec, config, sandbox, payload, proxy)
        clean = True
    finally:
        if kept is not None:
            kept.give_back(sandbox, keep=clean)  # ended unless clean, alive and idle
        else:
            sandbox.close()
        if proxy is not None:
            proxy.stop()
