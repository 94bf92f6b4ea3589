"""External agents over HTTP: our dialect stepwise (POST /step), sharpebench's per decision
(POST /decide), served on loopback by real HTTP servers, run and re-executed.

The agent is outside the harness's sandbox (agent_process=remote, said in the receipt's
capabilities and limits); what the harness still owns: the closed contract, the decision's
budget, bounded retries for transport errors only, a circuit breaker after three faults in a
row, and re-execution, which catches a server that keeps state between runs.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from harness import run
from harness.agents.external import BREAKER_FAULTS, http_agent, public_addresses_only
from harness.cli import main
from harness.rundata.config import ConfigError
from harness.runs.reexecute import DIVERGED, REPRODUCED, reexecute
from tests.support.http_agents import first_two, serving
from tests.support.sandbox import sandbox_config

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "agents"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def example(name: str) -> Iterator[str]:
    """One of the reference HTTP agents, in its own process, as an entrant runs it."""
    port = _free_port()
    process = subprocess.Popen([sys.executable, str(EXAMPLES / name), str(port)], cwd=EXAMPLES)
    try:
        for _ in range(200):  # until it listens (a connect, not a timing guess)
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait()


def _config(release: Path, out: Path, url: str, dialect: str = "pit", **extra: Any) -> Any:
    return sandbox_config(
        release, out, agent_http=url, dialect=dialect, agent_process="auto", **extra
    )


@pytest.mark.parametrize(
    ("name", "dialect"), [("pit_http.py", "pit"), ("sharpebench_http.py", "sharpebench")]
)
def test_the_reference_http_agents_run_and_pass_re_execution(
    march_release: Path, tmp_path: Path, name: str, dialect: str
) -> None:
    with example(name) as url:
        config = _config(march_release, tmp_path, url, dialect, probe=2)
        body = run(http_agent(url, dialect=dialect), config).body
        assert all(c["status"] == "complete" and c["trades"] > 0 for c in body["cells"])
        assert body["capabilities"]["agent_process"] == "remote"
        assert body["config"]["agent_transport"] == "http"
        assert body["limits"][0].startswith("agent_process: remote")
        again = reexecute(
            config.receipt_path,
            trajectory=config.trajectory_path,
            bundle=march_release,
            agent=http_agent(url, dialect=dialect),
        )
    assert again.result == REPRODUCED, again.to_json()
    assert again.steps_compared == sum(c["sessions"] for c in body["cells"]) + (
        2 if dialect == "pit" else 0
    )


def test_a_server_that_keeps_state_between_runs_diverges_where_it_remembers(
    march_release: Path, tmp_path: Path
) -> None:
    sessions: dict[str, list[dict[str, Any]]] = {}
    seen: set[str] = set()  # the tasks it answered, kept across runs: the cheat

    def answer(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        message = body["message"]
        sessions.setdefault(body["session"], []).append(message)
        reply = first_two(message)
        if message["type"] == "result":
            task = [m for m in sessions[body["session"]] if m["type"] == "task"][-1]
            key = f"{task['arm']}/{task['clock']}/{task['session_date']}"
            if key == "redacted/dump/2023-03-02" and key in seen:
                reply["picks"] = reply["picks"][:1]  # remembers, and changes its mind
            seen.add(key)
        return 200, reply

    with serving(answer) as url:
        config = _config(march_release, tmp_path / "out", url, probe=0)
        run(http_agent(url), config)
        again = reexecute(
            config.receipt_path,
            trajectory=config.trajectory_path,
            bundle=march_release,
            agent=http_agent(url),
        )
    assert again.result == DIVERGED
    assert again.divergence is not None
    found = again.divergence
    assert (found.cell, found.step, found.session) == ("redacted/dump", 2, "2023-03-02")
    assert len(found.recorded["picks"]) == 2 and len(found.reexecuted["picks"]) == 1


def test_a_transport_error_is_retried_within_the_step_and_the_step_is_sent_again(
    march_release: Path, tmp_path: Path
) -> None:
    calls: list[tuple[str, int]] = []

    def answer(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        calls.append((body["session"], body["step"]))
        if len(calls) == 3:
            return 503, {"error": "busy"}
        return 200, first_two(body["message"])

    with serving(answer) as url:
        config = _config(march_release, tmp_path, url, arms=("main",), clocks=("pit",), probe=0)
        body = run(http_agent(url), config).body
    assert body["cells"][0]["status"] == "complete"
    assert body["attempts"] == []
    assert calls[2] == calls[3]  # the same session and step, sent again


def test_a_4xx_or_an_unknown_field_is_the_agents_fault(march_release: Path, tmp_path: Path) -> None:
    def refuses(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        return 404, {"error": "no such route"}

    def chatty(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        return 200, {**first_two(body["message"]), "latency_ms": 3}

    for answer, named in ((refuses, "HTTP 404"), (chatty, "latency_ms")):
        with serving(answer) as url:
            out = tmp_path / named.replace(" ", "")
            config = _config(march_release, out, url, arms=("main",), clocks=("pit",), probe=0)
            cell = run(http_agent(url), config).body["cells"][0]
        assert cell["status"] == "agent_error"
        assert cell["agent_fault"]["kind"] == "protocol_violation"
        assert named in cell["agent_fault"]["message"]


def test_an_agent_past_its_budget_is_its_resource_limit(
    march_release: Path, tmp_path: Path
) -> None:
    release = threading.Event()

    def slow(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        release.wait(30)
        return 200, first_two(body["message"])

    try:
        with serving(slow) as url:
            config = _config(march_release, tmp_path, url, arms=("main",), clocks=("pit",))
            cell = run(http_agent(url, timeout=0.5), config).body["cells"][0]
    finally:
        release.set()
    assert cell["status"] == "agent_error"
    assert cell["agent_fault"]["kind"] == "resource_limit"


def test_an_agent_that_cannot_be_reached_opens_the_breaker_and_is_never_scored(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    (tmp_path / "run.json").write_text(
        json.dumps({"bundle_path": str(march_release), "forms": ["8-K"],
                    "start": "2023-03-01", "end": "2023-03-03", "agent_http": url})
    )  # fmt: skip
    code = main(["run", "--config", str(tmp_path / "run.json"), "--trajectory",
                 str(tmp_path / "t.jsonl"), "--receipt", str(tmp_path / "r.json")])  # fmt: skip
    assert code == 3  # ours (the transport's), not the agent's
    body = json.loads((tmp_path / "r.json").read_text())["body"]
    assert all(c["status"] == "harness_error" for c in body["cells"])
    assert body["rankable"] is False
    failures = [a["failure"] for a in body["attempts"]]
    assert "could not be reached" in failures[0]
    # after three faults in a row nothing is sent again: each later attempt fails at once
    assert all("circuit breaker is open" in f for f in failures[1:])
    assert len(failures) == 9 * 3 and BREAKER_FAULTS == 3
    del capsys


def test_an_http_agent_is_not_sandboxed_and_says_so(march_release: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="outside the harness's sandbox"):
        run(
            http_agent("http://127.0.0.1:9"),
            sandbox_config(
                march_release, tmp_path, agent_http="http://127.0.0.1:9", agent_process="isolated"
            ),
        )
    with pytest.raises(ValueError, match="http:// or https://"):
        http_agent("file:///etc/passwd")
    with pytest.raises(ValueError, match="no query, fragment or credentials"):
        http_agent("http://user:secret@127.0.0.1:9/")


def test_a_transport_failure_during_re_execution_is_its_own_word_never_a_divergence(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(lambda path, body: (200, first_two(body["message"]))) as url:
        config = _config(march_release, tmp_path, url, probe=0)
        run(http_agent(url), config)
    # the agent is gone: nothing can be compared, and nothing is called a divergence
    code = main(["verify", config.receipt_path, "--trajectory", config.trajectory_path,
                 "--bundle", str(march_release), "--reexecute", "--json",
                 "--agent-http", url])  # fmt: skip
    assert code == 3
    report = json.loads(capsys.readouterr().out.split("scores re-derived ok\n", 1)[1])
    assert report["result"] == "reexecution_failed"
    assert report["divergence"] is None
    assert "main/leaky" in report["failure"]


def test_an_agent_that_answers_a_repeated_step_differently_is_refused(
    march_release: Path, tmp_path: Path
) -> None:
    asked: list[int] = []

    def counting(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        asked.append(body["step"])
        reply = first_two(body["message"])
        if reply["type"] == "tool":
            reply["args"] = {"limit": len(asked)}  # a counter: the same step, another answer
        return 200, reply

    with serving(counting) as url:
        config = _config(march_release, tmp_path, url, arms=("main",), clocks=("pit",))
        cell = run(http_agent(url), config).body["cells"][0]
    assert asked[:2] == [1, 1]
    assert cell["status"] == "agent_error"
    assert cell["agent_fault"]["kind"] == "protocol_violation"
    assert "answered differently" in cell["agent_fault"]["message"]


def test_an_answer_that_drips_past_the_budget_is_the_agents_resource_limit(
    march_release: Path, tmp_path: Path
) -> None:
    stop = threading.Event()

    class Dripping(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            with contextlib.suppress(OSError):
                while not stop.wait(0.2):  # a byte at a time: each read is quick
                    self.wfile.write(b" ")
                    self.wfile.flush()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Dripping)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        config = _config(march_release, tmp_path, url, arms=("main",), clocks=("pit",))
        # whole, the answer would take 200 s, and be no JSON: the budget ends it first
        cell = run(http_agent(url, timeout=1.0), config).body["cells"][0]
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
    assert cell["status"] == "agent_error"
    assert cell["agent_fault"]["kind"] == "resource_limit"


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.7", "private"),
        ("169.254.169.254", "link-local"),  # a cloud's metadata service
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("100.64.1.2", "not a globally reachable"),  # carrier-grade NAT's shared range
        ("2002:a00:1::", "private"),  # 6to4 carrying 10.0.0.1
        ("2002:7f00:1::", "loopback"),  # 6to4 carrying 127.0.0.1
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"),  # Teredo: client 10.0.0.1
        ("93.184.215.14", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_the_public_address_policy(address: str, refused: str | None) -> None:
    why = public_addresses_only(address)
    assert (why is None) if refused is None else (refused in (why or ""))


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_an_agent_on_a_refused_address_is_never_called(
    march_release: Path, tmp_path: Path, host: str
) -> None:
    """Checked after the name is resolved (``localhost``), before anything is sent."""
    calls: list[str] = []

    def answer(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        calls.append(path)
        return 200, first_two(body["message"])

    with serving(answer) as url:
        url = url.replace("127.0.0.1", host)
        config = _config(march_release, tmp_path, url, arms=("main",), clocks=("pit",), probe=0)
        body = run(http_agent(url, addresses=public_addresses_only), config).body
    assert calls == []
    assert body["cells"][0]["status"] == "harness_error"  # the site's refusal, not the agent's
    assert "loopback address" in body["attempts"][0]["failure"]
