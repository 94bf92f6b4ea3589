"""examples/ci's workflow run as CI runs it: its eval and gate steps, in order, in a copy of
the example (the checkout, setup-python and install steps are CI's; this environment has
done them), with the installed ``pit-harness``. The committed baseline passes; a leak
planted in the agent fails the gate, naming the mask; the pre-commit hook agrees."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.support.ci_example import EXAMPLE, hook, run_script, run_steps


def _step(name: str, root: Path) -> subprocess.CompletedProcess[str]:
    where, script = run_steps()[name]
    return run_script(script, root / where)


def _failed_rules(printed: str) -> list[str]:
    return [line.split()[1] for line in printed.splitlines() if line.startswith("FAIL  ")]


def test_the_workflow_gates_the_stub_and_fails_a_planted_leak(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "examples" / "ci")
    folder = tmp_path / "examples" / "ci"
    assert run_steps()["eval"][0] == "examples/ci" == run_steps()["gate"][0]

    done = _step("eval", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (folder / "receipt.json").is_file() and (folder / "trajectory.jsonl").is_file()
    gated = _step("gate", tmp_path)
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert gated.stdout.splitlines()[-1].startswith("gate PASSED: ")
    assert "95% [" in gated.stdout  # the files given: each delta's interval is drawn
    assert "PASS  reasoning_audit  0 hits" in gated.stdout
    hooked = run_script(hook()["entry"], folder)
    assert hooked.returncode == 0, hooked.stdout + hooked.stderr

    # the leak: the agent now reads the shifted date back ten years on the mask probe
    config = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(
        json.dumps({**config, "agent": "harness.agents.baselines:date_reader"})
    )
    done = _step("eval", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    gated = _step("gate", tmp_path)
    assert gated.returncode == 1, gated.stdout + gated.stderr
    assert "mask" in _failed_rules(gated.stdout)
    assert gated.stdout.splitlines()[-1].startswith("gate FAILED: mask")
    hooked = run_script(hook()["entry"], folder)
    assert hooked.returncode == 1 and _failed_rules(hooked.stdout) == ["mask"]
