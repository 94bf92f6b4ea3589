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

from harness import canonical
from harness.receipt.build import receipt_text
from harness.runs.trajectory import file_sha256

REPO = Path(__file__).resolve().parents[2]
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


def _config(folder: Path, release: Path) -> Path:
    """Two cells of the main arm over three sessions, the agent in the harness's process
    (the guard records its egress attempts there as it does in the sandbox)."""
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
                "agent_process": "in_process",
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
    kept = [e for e in events if e["event"] != "network_attempt"]
    assert len(kept) == len(events) - 1
    for seq, event in enumerate(kept):
        event["seq"] = seq
        if event["event"] == "run_end":
            event["egress_attempts"] = 0
    trajectory.write_text("".join(canonical.line(e) + "\n" for e in kept))
    receipt_json = json.loads(receipt.read_text())
    body = receipt_json["body"]
    body["valid"], body["invalidated_by"] = True, []
    body["network"].update(egress_attempts=0, attempts=[], clean=True)
    sha = file_sha256(trajectory)
    body["binding"]["trajectory_sha256"] = sha
    body["trajectory"].update(events=len(kept), sha256=sha)
    receipt.write_text(receipt_text(body, receipt_json["emitted_at"]))


def test_a_laundered_egress_attempt_passes_verify_and_is_refused_by_reexecution(
    march_release: Path, tmp_path: Path
) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "dialer.py").write_text(textwrap.dedent(DIALER))
    receipt, trajectory, outputs = _outputs(tmp_path)
    config = _config(tmp_path, march_release)
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
    assert found["divergence"]["reexecuted"]["count"] == 1


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
    march_release: Path, tmp_path: Path
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent(TRADER))
    receipt, trajectory, outputs = _outputs(tmp_path)
    config = _config(tmp_path, march_release)
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
