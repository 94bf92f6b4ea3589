"""examples/ci: the GitHub workflow is valid against GitHub's published workflow schema
(SchemaStore's, as check-jsonschema vendors it: offline), and the pre-commit hook is a
local hook that runs the gate."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.support.ci_example import PRE_COMMIT, WORKFLOW, gate_job, hook, run_steps


def check_workflow(path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema against its vendored copy of SchemaStore's github-workflow schema
    (no network: the schema ships in the package)."""
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
         str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_workflow_is_valid_against_githubs_schema() -> None:
    done = check_workflow(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok -- validation done" in done.stdout


def test_a_broken_workflow_is_caught(tmp_path: Path) -> None:
    """The check can fail: a job with no runner, a step with a key GitHub does not know."""
    text = WORKFLOW.read_text()
    for name, broken in (
        ("no-runner", re.sub(r"(?m)^\s+runs-on: .*\n", "", text)),
        ("unknown-key", text.replace("timeout-minutes: 30", "timeout-minutes: 30\n    retries: 2")),
    ):
        assert broken != text
        (tmp_path / f"{name}.yml").write_text(broken)
        done = check_workflow(tmp_path / f"{name}.yml")
        assert done.returncode == 1 and "Schema validation errors" in done.stdout, name


def test_the_workflow_runs_the_harness_on_python_311_and_gates_the_run() -> None:
    job = gate_job()
    uses = [s["uses"].split("@")[0] for s in job["steps"] if "uses" in s]
    assert uses[:2] == ["actions/checkout", "actions/setup-python"]
    setup = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["python-version"] == "3.11"
    steps = run_steps()
    assert list(steps) == ["install", "eval", "gate"]
    assert "--require-hashes -r requirements/harness.lock" in steps["install"][1]
    assert "pit-harness release synth" in steps["eval"][1]
    assert "pit-harness run --config run.json" in steps["eval"][1]
    gate = shlex.split(steps["gate"][1].replace("\\\n", " "))
    assert gate[:5] == [
        "pit-harness",
        "gate",
        "receipt.json",
        "--baseline",
        "baseline/receipt.json",
    ]
    assert "--require-mask-holds" in gate and gate[gate.index("--max-contamination") + 1] == "0.02"


def test_the_pre_commit_hook_is_a_local_hook_that_runs_the_gate() -> None:
    """No schema of pre-commit's configuration ships with check-jsonschema; these are the
    keys pre-commit requires of a local hook (id, name, entry, language) and what this
    one must say."""
    found = hook()
    assert {"id", "name", "entry", "language"} <= set(found)
    assert found["language"] == "system" and found["pass_filenames"] is False
    assert set(found) <= {"id", "name", "entry", "language", "files", "pass_filenames"}
    entry = shlex.split(found["entry"])
    assert entry[:5] == [
        "pit-harness",
        "gate",
        "receipt.json",
        "--baseline",
        "baseline/receipt.json",
    ]
    files = re.compile(found["files"])
    assert files.search("receipt.json") and files.search("baseline/receipt.json")
    assert not files.search("agent/receipt.json.bak")
    assert PRE_COMMIT.name == ".pre-commit-config.yaml"
