"""The agent's side of the pipe, inside a cell: load the agent, answer tasks.

The agent gets a ``RemoteToolbox``: the four tools with the signatures the tool table
declares (the harness's own have them too), each call a message to the harness, which
alone holds the release, the clocks and the trajectory. Every message is one of the
sandbox's message types (``messages``). Every failure is reported in the harness's
taxonomy (``harness.outcomes``); the network guard runs here too, and its attempts travel
with every reply so the harness can record their call sites.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import msgspec

from harness import outcomes
from harness.agents.base import AgentSpec, Decision, Task, load_agent
from harness.isolation.guard import EgressAttempt, NetworkAbort, NetworkGuard
from harness.isolation.sandbox import messages as msg
from harness.isolation.sandbox.channel import Channel
from harness.tools.table import TOOL_SCHEMA, TOOLS, proxy

# Where an external agent's process works in a cell: the same folder in every cell.
CELL_HOME = "/tmp/agent"
# A cell whose external agent's process exited mid-cell exits with this code.
AGENT_PROCESS_EXITED_CODE = 1


class RemoteToolbox:
    """The four window tools, served by the harness over the cell's channel."""

    def __init__(self, chan: Channel, task: Task, newly_knowable: int) -> None:
        self._chan = chan
        self.arm = task.arm
        self.clock = task.clock
        self.session_date = task.session_date
        self.known_at = task.known_at
        self._new = newly_knowable

    def _call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            text = json.dumps(msg.ToolCall(tool=tool, args=args).wire())
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{tool}: arguments must be JSON values ({exc})") from None
        self._chan.send_text(text)
        reply = msg.read(self._chan.recv(), msg.ToCell)
        if not isinstance(reply, msg.ToolResult):
            raise msg.MessageError(f"the harness answered a tool call with {type(reply).__name__}")
        return reply.result

    def newly_knowable(self) -> int:
        return self._new

    def schema(self) -> list[dict[str, Any]]:
        return TOOL_SCHEMA


# pit_list, pit_search, pit_read, pit_coverage: each a message to the harness
for _tool in TOOLS.values():
    setattr(RemoteToolbox, _tool.name, proxy(_tool, RemoteToolbox.__qualname__))


class _Attempts:
    def __init__(self, guard: NetworkGuard) -> None:
        self._guard = guard
        self._seen = 0

    def take(self) -> list[msg.Attempt]:
        new = self._guard.attempts[self._seen :]
        self._seen = len(self._guard.attempts)
        return [msg.Attempt(a.call, a.target, a.site, list(a.stack)) for a in new]


def _load(agent: dict[str, Any]) -> AgentSpec:
    if agent["kind"] == "command":  # an agent in another process, started in this cell
        from harness.agents import external

        external.CELL_HOME = CELL_HOME
        return external.spec_from_message(agent)
    if agent["kind"] == "ref":
        import sys

        sys.path[:0] = agent.get("sys_path") or []
        return load_agent(agent["ref"]).resolved()
    import cloudpickle

    spec = cloudpickle.loads(base64.b64decode(agent["data"]))
    if not isinstance(spec, AgentSpec):
        raise TypeError(f"the pickled agent is a {type(spec).__name__}, not an AgentSpec")
    return spec


def _fault(chan: Channel, attempts: _Attempts, kind: str, message: str) -> int:
    chan.send(msg.AgentError(kind=kind, message=message, attempts=attempts.take()).wire())
    return 0


def _exited(chan: Channel, attempts: _Attempts, exc: Exception) -> int:
    message = str(exc)[:2000]
    chan.send(msg.AgentExited(message=message, attempts=attempts.take()).wire())
    return AGENT_PROCESS_EXITED_CODE


def _abort(chan: Channel, attempts: _Attempts, exc: NetworkAbort) -> int:
    chan.send(msg.Abort(attempts=attempts.take(), site=exc.attempt.site).wire())
    return 0


def serve(chan: Channel, message: msg.Load) -> int:
    """Serve one cell; the return value is the process's exit code."""
    attempts = _Attempts(_install_guard(message))
    agent, code = _make_agent(chan, attempts, message.agent)
    if code is not None:
        return code
    chan.send(msg.Ready(attempts=attempts.take()).wire())
    while True:
        request = msg.read(chan.recv(), msg.ToCell)
        if not isinstance(request, msg.TaskRequest):
            return 0
        code = _answer(chan, attempts, agent, request)
        if code is not None:
            return code


def _install_guard(message: msg.Load) -> NetworkGuard:
    relay = message.relay
    if relay:  # a run with model endpoints: one way out, to the recording proxy
        import os

        from harness.isolation.sandbox.relay import start_relay

        os.environ.update(relay["environment"])
        start_relay(int(relay["port"]), str(relay["socket"]))
    guard = NetworkGuard(
        message.policy, relay_port=int(relay["port"]) if relay else None, observe=message.wire_held
    )
    guard.install()
    return guard


def _make_agent(
    chan: Channel, attempts: _Attempts, agent: dict[str, Any]
) -> tuple[Any, int | None]:
    """(the cell's agent, None), or (None, the exit code) once its fault is reported."""
    try:
        spec = _load(agent)
    except NetworkAbort as exc:
        return None, _abort(chan, attempts, exc)
    except BaseException as exc:
        return None, _fault(chan, attempts, outcomes.LOAD_FAILED, outcomes.error_text(exc))
    try:
        return spec.new(), None
    except NetworkAbort as exc:
        return None, _abort(chan, attempts, exc)
    except outcomes.AgentFault as exc:  # an external agent's, in its own words
        return None, _fault(chan, attempts, exc.fault.kind, exc.fault.message)
    except outcomes.RuntimeFailure as exc:
        return None, _exited(chan, attempts, exc)
    except MemoryError as exc:
        return None, _fault(chan, attempts, outcomes.RESOURCE_LIMIT, outcomes.error_text(exc))
    except Exception as exc:
        kind = outcomes.CONSTRUCTOR_RAISED
        return None, _fault(chan, attempts, kind, outcomes.error_text(exc))
    except BaseException as exc:
        return None, _fault(chan, attempts, outcomes.AGENT_EXIT, outcomes.error_text(exc))


def _answer(chan: Channel, attempts: _Attempts, agent: Any, request: msg.TaskRequest) -> int | None:
    """One task: its decision sent, or None to go on; an exit code when the cell ends."""
    fields = msgspec.structs.asdict(request.task)
    task = Task(
        **{
            **fields,
            "held": tuple(fields["held"]),
            "positions": tuple((str(k), float(u)) for k, u in fields.get("positions", ())),
        }
    )
    tools = RemoteToolbox(chan, task, request.newly_knowable)
    try:
        decision = Decision.coerce(agent.decide(task, tools))
    except NetworkAbort as exc:
        return _abort(chan, attempts, exc)
    except outcomes.AgentFault as exc:  # an external agent's protocol fault, its limit
        if not exc.fatal:
            chan.send(msg.DecisionError(message=exc.fault.message, attempts=attempts.take()).wire())
            return None
        return _fault(chan, attempts, exc.fault.kind, exc.fault.message)
    except outcomes.RuntimeFailure as exc:
        # an external agent's process exited mid-cell: the harness runs the cell again
        # from its first step, and says how it ended
        return _exited(chan, attempts, exc)
    except MemoryError as exc:
        return _fault(chan, attempts, outcomes.RESOURCE_LIMIT, outcomes.error_text(exc))
    except Exception as exc:
        error = msg.DecisionError(message=outcomes.error_text(exc), attempts=attempts.take())
        chan.send(error.wire())
        return None
    except BaseException as exc:
        return _fault(chan, attempts, outcomes.AGENT_EXIT, outcomes.error_text(exc))
    picks: list[str | None] = []
    bad: dict[str, str] = {}
    for n, pick in enumerate(decision.picks):
        picks.append(pick if isinstance(pick, str) else None)
        if not isinstance(pick, str):
            bad[str(n)] = repr(pick)[:80]
    chan.send(
        msg.Decided(
            picks=picks,
            bad=bad,
            text=decision.text,
            attempts=attempts.take(),
            wire_decision=decision.wire,
        ).wire()
    )
    return None


def attempt_from_message(attempt: msg.Attempt) -> EgressAttempt:
    """An attempt reported by a cell (its message type checked the shape), cut to size."""
    return EgressAttempt(
        attempt.call[:200], attempt.target[:200], attempt.site[:300], tuple(attempt.stack[:8])
    )
