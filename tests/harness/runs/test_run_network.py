"""The network guard inside a run: an egress attempt invalidates the run, is named
with its call site, and the socket module is whole again afterwards."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import ssl
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, run
from harness.agents.adapters.plain import from_callable

ORIGINALS = {
    "socket": socket.socket,
    "create_connection": socket.create_connection,
    "getaddrinfo": socket.getaddrinfo,
    "gethostbyname": socket.gethostbyname,
    "wrap_socket": getattr(ssl, "wrap_socket", None),
    "context_wrap": ssl.SSLContext.wrap_socket,
}


def _urlopen() -> None:
    urllib.request.urlopen("http://example.com/", timeout=1)


def _create_connection() -> None:
    socket.create_connection(("example.com", 80), timeout=1)


def _getaddrinfo() -> None:
    socket.getaddrinfo("example.com", 443)


def _wrap_socket() -> None:
    a, b = socket.socketpair()
    try:
        ssl.wrap_socket(a, do_handshake_on_connect=False)  # type: ignore[attr-defined]
    finally:
        a.close()
        b.close()


def config(release: Path, out: Path, **extra: Any) -> RunConfig:
    return RunConfig(
        bundle_path=str(release),
        forms=("8-K",),
        start="2023-03-01",
        end="2023-03-03",
        trajectory_path=str(out / "trajectory.jsonl"),
        receipt_path=str(out / "receipt.json"),
        **extra,
    )


def reaching_agent(call: Callable[[], None]) -> Callable[[str, Any], list[str]]:
    def agent(prompt: str, tools: Any) -> list[str]:
        with contextlib.suppress(Exception):  # a careless agent swallows the error, trades anyway
            call()
        return [r["row_key"] for r in tools.pit_list()["rows"]]

    return agent


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (_urlopen, "socket.create_connection"),
        (_create_connection, "socket.create_connection"),
        (_getaddrinfo, "socket.getaddrinfo"),
        (_wrap_socket, "ssl.wrap_socket"),
    ],
)
def test_egress_invalidates_the_run_with_its_call_site(
    march_release: Path, tmp_path: Path, call: Callable[[], None], name: str, agent_process: str
) -> None:
    result = run(
        from_callable(reaching_agent(call)),
        config(march_release, tmp_path, agent_process=agent_process),
    )
    body = result.body
    if agent_process != "in_process" and name == "ssl.wrap_socket":
        # in a cell whose wire is held the guard observes: wrapping a socket (here one end
        # of a socket pair) sends nothing off the cell, so nothing is recorded or counted
        assert body["valid"] is True and body["network"]["counted"] == "wire"
        return
    assert body["valid"] is False
    network = body["network"]
    assert network["clean"] is False and network["egress_attempts"] >= 1
    assert any(a["call"] == name for a in network["attempts"])
    assert all(
        a["site"].startswith(__name__.rsplit(".", 1)[-1]) or __name__ in a["site"]
        for a in network["attempts"]
    )
    assert any(name in reason for reason in body["invalidated_by"])
    if agent_process == "in_process":
        assert network["scope"].startswith("in-process")
    else:  # the guard ran inside the sandbox and reported its call sites over the pipe;
        # the count is the wire's, where each look-up's query was refused
        assert network["guard"] == "network-namespace+wire" and "namespace" in network["scope"]
        assert {(w["protocol"], w["address"], w["port"]) for w in network["wire"]} == {
            ("udp", "192.0.2.53", 53)
        }
        assert network["egress_attempts"] == len(network["wire"])
    # the guard is gone: every entry point is the original object again
    assert socket.socket is ORIGINALS["socket"]
    assert socket.create_connection is ORIGINALS["create_connection"]
    assert socket.getaddrinfo is ORIGINALS["getaddrinfo"]
    assert socket.gethostbyname is ORIGINALS["gethostbyname"]
    assert getattr(ssl, "wrap_socket", None) is ORIGINALS["wrap_socket"]
    assert ssl.SSLContext.wrap_socket is ORIGINALS["context_wrap"]


def test_fail_closed_carries_on_and_abort_stops_at_the_first(
    march_release: Path, tmp_path: Path, agent_process: str
) -> None:
    agent = from_callable(reaching_agent(_getaddrinfo))
    carried = run(agent, config(march_release, tmp_path / "fc", agent_process=agent_process)).body
    assert all(c["status"] == "complete" for c in carried["cells"])
    assert (
        carried["network"]["egress_attempts"]
        == sum(c["sessions"] for c in carried["cells"]) + carried["probe"]["total"]
    )

    stopped = run(
        agent,
        config(march_release, tmp_path / "ab", network_policy="abort", agent_process=agent_process),
    ).body
    assert stopped["valid"] is False
    assert stopped["network"]["egress_attempts"] == 1
    assert stopped["cells"][0]["status"] == "aborted"
    assert all(c["status"] == "not_run" for c in stopped["cells"][1:])
    assert stopped["aborted"] and "network egress" in stopped["aborted"]
    assert socket.getaddrinfo is ORIGINALS["getaddrinfo"]


def test_guard_is_removed_when_the_run_raises(march_release: Path, tmp_path: Path) -> None:
    def agent(prompt: str, tools: Any) -> list[str]:
        os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C while the agent runs
        return []

    with pytest.raises(KeyboardInterrupt):
        run(from_callable(agent), config(march_release, tmp_path, agent_process="in_process"))
    assert socket.socket is ORIGINALS["socket"]
    assert list(tmp_path.iterdir()) == []  # no half trajectory, no receipt
    assert socket.getaddrinfo is ORIGINALS["getaddrinfo"]


def test_unix_sockets_keep_working_during_a_run(
    march_release: Path, tmp_path: Path, agent_process: str
) -> None:
    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        a, b = socket.socketpair(socket.AF_UNIX)
        with a, b:
            a.sendall(b"ping")
            return {"picks": [], "text": b.recv(4).decode()}

    cfg = config(march_release, tmp_path, agent_process=agent_process)
    body = run(from_callable(agent), cfg).body
    assert body["valid"] is True and body["network"]["clean"] is True
    texts = {e["text"] for e in events(tmp_path / "trajectory.jsonl") if e["event"] == "decision"}
    assert texts == {"ping"}


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]
