"""The agent's side of the pipe, inside a cell: load the agent, answer tasks.

The agent gets a ``RemoteToolbox``: the four tools with the signatures the tool table
declares (the harness's own have them too), each call a message to the harness, which alone holds the release, the
clocks and the trajectory. Every failure is reported in the harness's taxonomy
(``harness.outcomes``); the network guard runs here too, and its attempts travel with
every reply so the harness can record their call sites.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from harness import outcomes
from harness.agents.base import AgentSpec, Decision, Task, load_agent
from harness.isolation.guard import EgressAttempt, NetworkAbort, NetworkGuard
from harness.isolation.sandbox.channel import Channel
from harness.tools.table import TOOL_SCHEMA, TOOLS, proxy


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
            text = json.dumps({"op": "tool", "tool": tool, "args": args})
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{tool}: arguments must be JSON values ({exc})") from None
        self._chan.send_text(text)
        reply = self._chan.recv()
        result: dict[str, Any] = reply["result"]
        return result

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

    def take(self) -> list[dict[str, object]]:
        new = self._guard.attempts[self._seen :]
        self._seen = len(self._guard.attempts)
        return [a.to_json() for a in new]


def _load(agent: dict[str, Any]) -> AgentSpec:
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
    chan.send({"op": "agent_error", "kind": kind, "message": message, "attempts": attempts.take()})
    return 0


def _abort(chan: Channel, attempts: _Attempts, exc: NetworkAbort) -> int:
    chan.send({"op": "abort", "attempts": attempts.take(), "site": exc.attempt.site})
    return 0


def serve(chan: Channel, message: dict[str, Any]) -> int:
    """Serve one cell; the return value is the process's exit code."""
    attempts = _Attempts(_install_guard(message))
    agent, code = _make_agent(chan, attempts, message["agent"])
    if code is not None:
        return code
    chan.send({"op": "ready", "attempts": attempts.take()})
    while True:
        request = chan.recv()
        if request.get("op") != "task":
            return 0
        code = _answer(chan, attempts, agent, request)
        if code is not None:
            return code


def _install_guard(message: dict[str, Any]) -> NetworkGuard:
    relay = message.get("relay")
    if relay:  # a run with model endpoints: one way out, to the recording proxy
        import os

        from harness.isolation.sandbox.relay import start_relay

        os.environ.update(relay["environment"])
        start_relay(int(relay["port"]), str(relay["socket"]))
    guard = NetworkGuard(
        message.get("policy", "fail_closed"), relay_port=int(relay["port"]) if relay else None
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
    except MemoryError as exc:
        return None, _fault(chan, attempts, outcomes.RESOURCE_LIMIT, outcomes.error_text(exc))
    except Exception as exc:
        kind = outcomes.CONSTRUCTOR_RAISED
        return None, _fault(chan, attempts, kind, outcomes.error_text(exc))
    except BaseException as exc:
        return None, _fault(chan, attempts, outcomes.AGENT_EXIT, outcomes.error_text(exc))


def _answer(chan: Channel, attempts: _Attempts, agent: Any, request: dict[str, Any]) -> int | None:
    """One task: its decision sent, or None to go on; an exit code when the cell ends."""
    task = Task(**request["task"])
    tools = RemoteToolbox(chan, task, request["newly_knowable"])
    try:
        decision = Decision.coerce(agent.decide(task, tools))
    except NetworkAbort as exc:
        return _abort(chan, attempts, exc)
    except MemoryError as exc:
        return _fault(chan, attempts, outcomes.RESOURCE_LIMIT, outcomes.error_text(exc))
    except Exception as exc:
        error = {"op": "decision_error", "message": outcomes.error_text(exc)}
        chan.send({**error, "attempts": attempts.take()})
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
        {
            "op": "decision",
            "picks": picks,
            "bad": bad,
            "text": decision.text,
            "attempts": attempts.take(),
        }
    )
    return None


def attempt_from_json(value: Any) -> EgressAttempt:
    """An attempt reported by a cell (the harness's side checks the shape)."""
    if not isinstance(value, dict):
        raise ValueError("an egress attempt must be an object")
    stack = value.get("stack") or []
    if not isinstance(stack, list) or not all(isinstance(s, str) for s in stack):
        raise ValueError("an egress attempt's stack must be a list of strings")
    fields = [value.get(k) for k in ("call", "target", "site")]
    if not all(isinstance(f, str) for f in fields):
        raise ValueError("an egress attempt needs call, target and site strings")
    return EgressAttempt(fields[0][:200], fields[1][:200], fields[2][:300], tuple(stack[:8]))  # type: ignore[index]
