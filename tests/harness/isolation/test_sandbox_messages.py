"""The sandbox's messages: each type puts on the pipe the bytes the pipe has always
carried, reads back as itself, and refuses what its type does not hold, naming it."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import msgspec
import pytest

from harness import run
from harness.agents.adapters.plain import from_callable
from harness.isolation.sandbox import messages as msg
from harness.isolation.sandbox.channel import Channel
from tests.harness.tools.test_tool_table import imported_beyond_the_standard_library
from tests.support.sandbox import require_sandbox
from tests.support.sandbox import sandbox_config as config

ATTEMPT = msg.Attempt(call="socket.connect", target="10.0.0.1:80", site="agent.py:3", stack=["x"])
ATTEMPT_WIRE = b'{"call":"socket.connect","target":"10.0.0.1:80","site":"agent.py:3","stack":["x"]}'
TASK = msg.TaskFields(
    kind="trade",
    prompt="Buy?",
    arm="shifted",
    clock="pit",
    session_date="2033-03-08",
    known_at="2033-03-08T14:30:00Z",
)

# what inside.probe() finds, in its order
CAPABILITIES: dict[str, Any] = {
    "uid": 0,
    "capabilities_dropped": True,
    "network_isolated": True,
    "filesystem_confined": True,
    "pid_isolated": True,
    "namespaces_private": True,
    "tmp_private": True,
    "processes_hidden": True,
    "nothing_shared_writable": True,
    "per_process_limits": {"memory": True, "cpu": True},
    "open_files_enforced": True,
    "environment": ["HOME", "PATH"],
}

CASES: list[tuple[msg.Message, Any, bytes]] = [
    (msg.OpenCell(limits={"memory_bytes": 1 << 28, "cpu_seconds": 30}), msg.ToZygote,
     b'{"op":"cell","limits":{"memory_bytes":268435456,"cpu_seconds":30}}'),
    (msg.Kill(), msg.ToZygote, b'{"op":"kill"}'),
    (msg.Quit(), msg.ToZygote, b'{"op":"quit"}'),
    (msg.AskTreeLimits(), msg.ToZygote, b'{"op":"tree_limits"}'),
    (msg.Hello(pid=7), msg.FromZygote, b'{"op":"hello","pid":7}'),
    (msg.TreeLimitsHeld(held={"memory": True, "cpu": False}), msg.FromZygote,
     b'{"op":"tree_limits","held":{"memory":true,"cpu":false}}'),
    (msg.CellExit(code=-9), msg.FromZygote, b'{"op":"cell_exit","code":-9}'),
    (msg.Probe(hidden=["/srv/release"]), msg.ToCell, b'{"op":"probe","hidden":["/srv/release"]}'),
    (msg.ProbeLimit(limit="memory"), msg.ToCell, b'{"op":"probe_limit","limit":"memory"}'),
    (msg.Load(agent={"kind": "ref", "ref": "a:b"}, policy="fail_closed", relay=None), msg.ToCell,
     b'{"op":"load","agent":{"kind":"ref","ref":"a:b"},"policy":"fail_closed","relay":null}'),
    (msg.TaskRequest(task=TASK, newly_knowable=3), msg.ToCell,
     b'{"op":"task","task":{"kind":"trade","prompt":"Buy?","arm":"shifted","clock":"pit",'
     b'"session_date":"2033-03-08","known_at":"2033-03-08T14:30:00Z"},"newly_knowable":3}'),
    (msg.ToolResult(result={"tool": "pit_read", "status": "ok"}), msg.ToCell,
     b'{"op":"result","result":{"tool":"pit_read","status":"ok"}}'),
    (msg.End(), msg.ToCell, b'{"op":"end"}'),
    (msg.Capabilities(**CAPABILITIES), msg.FromCell,
     b'{"op":"capabilities","uid":0,"capabilities_dropped":true,"network_isolated":true,'
     b'"filesystem_confined":true,"pid_isolated":true,"namespaces_private":true,'
     b'"tmp_private":true,"processes_hidden":true,"nothing_shared_writable":true,'
     b'"per_process_limits":{"memory":true,"cpu":true},"open_files_enforced":true,'
     b'"environment":["HOME","PATH"]}'),
    (msg.SetupFailed(message="no /proc"), msg.FromCell, b'{"op":"setup_failed","message":"no /proc"}'),
    (msg.Ready(attempts=[ATTEMPT]), msg.FromCell, b'{"op":"ready","attempts":[' + ATTEMPT_WIRE + b"]}"),
    (msg.ToolCall(tool="pit_read", args={"row_key": "r-1"}), msg.FromCell,
     b'{"op":"tool","tool":"pit_read","args":{"row_key":"r-1"}}'),
    (msg.Decided(picks=["r-1", None], bad={"1": "3"}, text="\u00e9t\u00e9", attempts=[]),
     msg.FromCell,
     b'{"op":"decision","picks":["r-1",null],"bad":{"1":"3"},"text":"\xc3\xa9t\xc3\xa9",'
     b'"attempts":[]}'),
    (msg.DecisionError(message="ValueError: x", attempts=[]), msg.FromCell,
     b'{"op":"decision_error","message":"ValueError: x","attempts":[]}'),
    (msg.AgentError(kind="load_failed", message="ImportError: y", attempts=[ATTEMPT]),
     msg.FromCell,
     b'{"op":"agent_error","kind":"load_failed","message":"ImportError: y","attempts":['
     + ATTEMPT_WIRE + b"]}"),
    (msg.AgentExited(message="exited with code 7", attempts=[]), msg.FromCell,
     b'{"op":"agent_exited","message":"exited with code 7","attempts":[]}'),
    (msg.Abort(attempts=[ATTEMPT], site="agent.py:3"), msg.FromCell,
     b'{"op":"abort","attempts":[' + ATTEMPT_WIRE + b'],"site":"agent.py:3"}'),
]  # fmt: skip


def sent(message: msg.Message) -> bytes:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        Channel(ours).send(message.wire())
        return theirs.recv(1 << 16)


@pytest.mark.parametrize(("message", "pipe", "wire"), CASES, ids=lambda c: type(c).__name__)
def test_a_message_goes_on_the_pipe_as_the_object_the_pipe_carries(
    message: msg.Message, pipe: Any, wire: bytes
) -> None:
    assert sent(message) == wire + b"\n"


@pytest.mark.parametrize(("message", "pipe", "wire"), CASES, ids=lambda c: type(c).__name__)
def test_a_message_reads_back_as_itself(message: msg.Message, pipe: Any, wire: bytes) -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        theirs.sendall(wire + b"\n")
        assert msg.read(Channel(ours).recv(), pipe) == message


def test_every_message_type_is_on_a_pipe() -> None:
    assert {type(m) for m, _, _ in CASES} == set(msg.Message.__subclasses__())


@pytest.mark.parametrize(
    ("value", "pipe", "named"),
    [
        ({"op": "ready", "attempts": [], "picks": []}, msg.FromCell, "unknown field `picks`"),
        (
            {"op": "ready", "attempts": [{"call": "c", "target": "t", "site": "s", "pid": 1}]},
            msg.FromCell,
            "unknown field `pid` - at `$.attempts[0]`",
        ),
        (
            {
                "op": "task",
                "task": {**msgspec.structs.asdict(TASK), "real_date": "2023-03-08"},
                "newly_knowable": 1,
            },
            msg.ToCell,
            "unknown field `real_date` - at `$.task`",
        ),
        ({"op": "hello", "pid": 1, "argv": []}, msg.FromZygote, "unknown field `argv`"),
        ({"op": "kill", "now": True}, msg.ToZygote, "unknown field `now`"),
        ({"op": "decision", "picks": [3], "bad": {}, "text": "", "attempts": []}, msg.FromCell,
         "`$.picks[0]`"),
        ({"op": "decision", "picks": [], "bad": {}, "attempts": []}, msg.FromCell,
         "missing required field `text`"),
        ({"op": "tool", "tool": "pit_read", "args": ["r-1"]}, msg.FromCell, "`$.args`"),
        ({"op": "spawn"}, msg.FromCell, "Invalid value 'spawn' - at `$.op`"),
        ({"op": "result", "result": {}}, msg.FromCell, "Invalid value 'result' - at `$.op`"),
        ({"pid": 1}, msg.FromZygote, "missing required field `op`"),
    ],
)  # fmt: skip
def test_a_message_its_type_does_not_hold_is_refused_by_name(
    value: dict[str, Any], pipe: Any, named: str
) -> None:
    with pytest.raises(msg.MessageError) as refused:
        msg.read(value, pipe)
    assert named in str(refused.value)
    assert str(refused.value).startswith(f"a malformed {str(value.get('op'))!r} message: ")


def test_a_tool_calls_arguments_travel_as_the_agent_gave_them() -> None:
    """json alone decides whether they are JSON values (a set is not), as before."""
    call = msg.ToolCall(tool="pit_read", args={"row_key": {"r-1"}})
    assert call.wire() == {"op": "tool", "tool": "pit_read", "args": {"row_key": {"r-1"}}}


def test_the_messages_import_nothing_the_sandbox_lacks() -> None:
    """The standard library, msgspec (and what msgspec itself imports), and harness
    modules as light."""
    found = set(imported_beyond_the_standard_library("harness.isolation.sandbox.messages"))
    assert found - set(imported_beyond_the_standard_library("msgspec")) == {
        "harness",
        "harness.isolation",
        "harness.isolation.sandbox",
        "harness.isolation.sandbox.messages",
        "harness.version",
    }


def test_an_agent_that_writes_its_own_message_with_a_field_too_many_is_refused_by_name(
    march_release: Path, tmp_path: Path
) -> None:
    """Agent code can reach the cell's socket: what it writes there is read as a message
    like any other, and a field no message holds is the agent's protocol violation."""
    require_sandbox()

    def agent(prompt: str, tools: Any) -> list[str]:
        smuggled = msg.Decided(picks=[], bad={}, text="", attempts=[]).wire()
        tools._chan.send({**smuggled, "real_date": "2023-03-01"})
        return []

    body = run(from_callable(agent), config(march_release, tmp_path, probe=0)).body
    faults = [cell["agent_fault"] for cell in body["cells"]]
    assert {fault["kind"] for fault in faults} == {"protocol_violation"}
    assert all(
        fault["message"] == "a malformed 'decision' message: Object contains unknown field "
        "`real_date`"
        for fault in faults
    )


def test_the_cells_own_modules_import_only_harness_modules_beyond_msgspec() -> None:
    """What the zygote loads for every cell (the shim, the agents it ships, the table)."""
    found = set()
    for module in (
        "harness.isolation.sandbox.shim",
        "harness.isolation.sandbox.inside",
        "harness.agents.stub",
        "harness.agents.baselines",
        "harness.agents.adapters.plain",
    ):
        found |= set(imported_beyond_the_standard_library(module))
    beyond = found - set(imported_beyond_the_standard_library("msgspec"))
    assert beyond and all(m == "harness" or m.startswith("harness.") for m in beyond), beyond
    assert "harness.tools.table" in beyond
