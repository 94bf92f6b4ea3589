"""Re-execution compares what a verdict rests on, not the decisions alone: each cell's
outcome, egress attempts, protocol faults and the attempts its agent's process exited in,
and the run's validity. Each attack here passes ``verify`` (which cannot tell) and is
refused by ``verify --reexecute``, through the command line as a verifier runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from harness import canonical
from harness.receipt.build import receipt_text
from harness.rundata.trajectory import file_sha256

REPO = Path(__file__).resolve().parents[3]
PYTHON = sys.executable


def _cli(*args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), str(REPO)])
    return subprocess.run(
        [PYTHON, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=600,
    )


def _config(folder: Path, release: Path, agent_process: str) -> Path:
    """Two cells of the main arm over three sessions (the guard records an egress attempt
    in the sandbox and in the harness's process alike)."""
    path = folder / "run.json"
    path.write_text(
        json.dumps(
            {
                "bundle_path": str(release),
                "forms": ["8-K"],
                "start": "2023-03-01",
                "end": "2023-03-03",
                "arms": ["main"],
                "clocks": ["leaky", "pit"],
                "probe": 0,
                "agent_process": agent_process,
            }
        )
    )
    return path


def _outputs(folder: Path) -> tuple[Path, Path, list[str]]:
    receipt, trajectory = folder / "out" / "receipt.json", folder / "out" / "trajectory.jsonl"
    return receipt, trajectory, ["--receipt", str(receipt), "--trajectory", str(trajectory)]


DIALER = """
import contextlib, socket

def agent(prompt, tools):
    # once, in the first session of the first cell: refused, recorded, the run invalid
    if (tools.arm, tools.clock, tools.session_date) == ("main", "leaky", "2023-03-01"):
        with contextlib.suppress(OSError):
            socket.create_connection(("example.com", 80), timeout=1)
    return [r["row_key"] for r in tools.pit_list(limit=2)["rows"]]
"""


def _launder(receipt: Path, trajectory: Path) -> None:
    """The egress attempt's event dropped, the run said valid and every hash recomputed
    with the harness's own receipt-building code: the hashes hold and so does every score
    re-derived from the trajectory, which no longer records the attempt."""
    events = [json.loads(line) for line in trajectory.read_text().splitlines()]
    # the guard's call site, and in the sandbox what the cell's wire saw of it too
    kept = [e for e in events if e["event"] not in ("network_attempt", "wire_attempt")]
    assert len(kept) < len(events)
    for seq, event in enumerate(kept):
        event["seq"] = seq
        if event["event"] == "run_end":
            event["egress_attempts"] = 0
    trajectory.write_text("".join(canonical.line(e) + "\n" for e in kept))
    receipt_json = json.loads(receipt.read_text())
    body = receipt_json["body"]
    body["valid"], body["invalidated_by"] = True, []
    body["network"].update(egress_attempts=0, attempts=[], clean=True)
    if body["network"].get("counted") == "wire":
        body["network"].update(wire=[], guard_sites=0, difference=None)
    sha = file_sha256(trajectory)
    body["binding"]["trajectory_sha256"] = sha
    body["trajectory"].update(events=len(kept), sha256=sha)
    receipt.write_text(receipt_text(body, receipt_json["emitted_at"]))


def test_a_laundered_egress_attempt_passes_verify_and_is_refused_by_reexecution(
    march_release: Path, tmp_path: Path, agent_process: str
) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "dialer.py").write_text(textwrap.dedent(DIALER))
    receipt, trajectory, outputs = _outputs(tmp_path)
    config = _config(tmp_path, march_release, agent_process)
    done = _cli("run", "--config", str(config), "--agent", "dialer:agent", *outputs,
                pythonpath=agents)  # fmt: skip
    assert receipt.exists(), done.stderr
    body = json.loads(receipt.read_text())["body"]
    assert body["valid"] is False and body["network"]["egress_attempts"] == 1

    _launder(receipt, trajectory)
    verify = ["verify", str(receipt), "--trajectory", str(trajectory),
              "--bundle", str(march_release)]  # fmt: skip
    offline = _cli(*verify)
    assert offline.returncode == 0, offline.stdout + offline.stderr
    assert "scores re-derived ok" in offline.stdout  # offline cannot tell

    again = _cli(*verify, "--reexecute", "--agent", "dialer:agent", pythonpath=agents)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "reexecution ok" not in again.stdout
    assert "reexecution DIVERGED" in again.stdout
    assert "main/leaky egress_attempts" in again.stdout

    report = _cli(*verify, "--reexecute", "--json", "--agent", "dialer:agent", pythonpath=agents)
    found = json.loads(report.stdout.split("scores re-derived ok\n", 1)[1])
    assert found["result"] == "diverged"
    assert found["divergence"]["cell"] == "main/leaky"
    assert found["divergence"]["field"] == "egress_attempts"
    assert found["divergence"]["recorded"] == {"count": 0, "destinations": []}
    assert found["divergence"]["reexecuted"]["count"] >= 1


TRADER = """
import json, sys

for line in sys.stdin:
    task = json.loads(line)
    sys.stdout.write(json.dumps({"type": "tool", "tool": "pit_list", "args": {"limit": 2}}) + "\\n")
    sys.stdout.flush()
    rows = json.loads(sys.stdin.readline())["result"]["rows"]
    decision = {"type": "decision", "picks": [r["row_key"] for r in rows], "text": ""}
    sys.stdout.write(json.dumps(decision) + "\\n")
    sys.stdout.flush()
"""


def test_an_agent_that_leaves_when_run_again_has_diverged_not_failed_re_execution(
    march_release: Path, tmp_path: Path, agent_process: str
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent(TRADER))
    receipt, trajectory, outputs = _outputs(tmp_path)
    config = _config(tmp_path, march_release, agent_process)
    command = f"{PYTHON} {agent}"
    done = _cli("run", "--config", str(config), "--agent-cmd", command, *outputs)
    assert done.returncode == 0, done.stdout + done.stderr
    body = json.loads(receipt.read_text())["body"]
    assert [c["status"] for c in body["cells"]] == ["complete", "complete"]

    # the same reference, another program: it exits on every attempt, in the same limits
    agent.write_text("import sys\nsys.exit(0)\n")
    verify = ["verify", str(receipt), "--trajectory", str(trajectory),
              "--bundle", str(march_release), "--reexecute"]  # fmt: skip
    again = _cli(*verify, "--agent-cmd", command)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "reexecution_failed" not in again.stdout
    assert "reexecution DIVERGED" in again.stdout
    assert "agent did not complete on re-execution" in again.stdout

    report = _cli(*verify, "--json", "--agent-cmd", command)
    found = json.loads(report.stdout.split("scores re-derived ok\n", 1)[1])
    assert found["result"] == "diverged"
    divergence = found["divergence"]
    assert (divergence["cell"], divergence["step"], divergence["field"]) == (
        "main/leaky",
        1,
        "outcome",
    )
    assert divergence["recorded"]["picks"]  # the decision recorded, and no decision again
    assert divergence["reexecuted"]["failed"] == "incomplete"


# -- each cell's facts, from synthetic trajectories ------------------------------------------


def _trajectory(path: Path, *cells: list[dict[str, Any]]) -> Path:
    """A run's events: its start, each cell's events between its start and end, its end."""
    events: list[dict[str, Any]] = [{"event": "run_start"}]
    for cell in cells:
        events += cell
    events.append({"event": "run_end", "aborted": None})
    path.write_text("".join(canonical.line({**e, "seq": n}) + "\n" for n, e in enumerate(events)))
    return path


def _cell(
    clock: str, *, before: tuple[dict[str, Any], ...] = (), fault: str | None = None
) -> list[dict[str, Any]]:
    where = {"arm": "main", "clock": clock}
    events = [*before, {"event": "cell_start", **where}]
    events.append({"event": "decision", **where, "session": "2023-03-01", "picks": ["r-1"],
                   "rejected": [], "agent_error": None})  # fmt: skip
    if fault is not None:
        events.append({"event": "agent_error", **where, "session": "2023-03-02",
                       "fault": {"kind": "protocol_violation", "message": fault}})  # fmt: skip
    return [*events, {"event": "cell_end", **where}]


def _failed(clock: str, failure: str, *egress: str) -> list[dict[str, Any]]:
    """A failed attempt's ledger entry and the egress attempts it made, written again."""
    attempt = {"event": "attempt_failed", "cell": f"main/{clock}", "attempt": 1,
               "failure": failure, "model_exchanges": 0}  # fmt: skip
    return [attempt, *({"event": "network_attempt", "call": "socket.connect", "target": t,
                        "site": "agent.py:3", "stack": []} for t in egress)]  # fmt: skip


EXITED = "the agent's process exited or closed its pipe mid-cell (exit code 1)"


def test_a_failed_attempts_egress_counts_in_its_own_cell(tmp_path: Path) -> None:
    from harness.runs.reexecute import DIVERGED, compare

    honest = _trajectory(tmp_path / "a.jsonl", _cell("leaky"), _cell("pit"))
    retried = _trajectory(
        tmp_path / "b.jsonl",
        _cell("leaky"),
        _cell("pit", before=tuple(_failed("pit", EXITED, "example.com:443"))),
    )
    result = compare(honest, retried)
    assert result.result == DIVERGED and result.divergence is not None
    found = result.divergence
    assert (found.cell, found.step, found.field) == ("main/pit", None, "egress_attempts")
    assert found.reexecuted == {"count": 1, "destinations": ["socket.connect example.com:443"]}


def test_a_retry_the_agents_process_caused_differs_and_one_of_ours_does_not(
    tmp_path: Path,
) -> None:
    from harness.runs.reexecute import DIVERGED, REPRODUCED, compare

    honest = _trajectory(tmp_path / "a.jsonl", _cell("leaky"))
    ours = tuple(_failed("leaky", "the cell's sandbox could not be set up"))
    theirs = tuple(_failed("leaky", EXITED))
    again = compare(honest, _trajectory(tmp_path / "b.jsonl", _cell("leaky", before=ours)))
    assert again.result == REPRODUCED
    again = compare(honest, _trajectory(tmp_path / "c.jsonl", _cell("leaky", before=theirs)))
    assert again.result == DIVERGED and again.divergence is not None
    assert again.divergence.field == "attempts"
    assert again.divergence.reexecuted == {"agent_process_exited": 1}


def test_a_protocol_fault_that_differs_is_named_by_its_field(tmp_path: Path) -> None:
    from harness.runs.reexecute import DIVERGED, compare

    said = _trajectory(tmp_path / "a.jsonl", _cell("leaky", fault="an unknown field 'x'"))
    other = _trajectory(tmp_path / "b.jsonl", _cell("leaky", fault="an unknown field 'y'"))
    result = compare(said, other)
    assert result.result == DIVERGED and result.divergence is not None
    assert result.divergence.field == "protocol_faults"
    assert result.divergence.recorded == ["an unknown field 'x'"]
    assert compare(said, said).ok
