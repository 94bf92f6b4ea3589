"""examples/ci as the tests read it: the GitHub workflow's steps and the pre-commit hook."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "ci"
WORKFLOW = EXAMPLE / "pit-gate.yml"
PRE_COMMIT = EXAMPLE / ".pre-commit-config.yaml"
# what a GitHub-hosted Linux runner runs a `run:` step with (its default shell)
SHELL = ("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c")


def workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())
    return loaded


def gate_job() -> dict[str, Any]:
    job: dict[str, Any] = workflow()["jobs"]["gate"]
    return job


def run_steps() -> dict[str, tuple[str, str]]:
    """Each ``run:`` step by its id: (its working directory, its script)."""
    job = gate_job()
    default = ((job.get("defaults") or {}).get("run") or {}).get("working-directory", ".")
    return {
        step["id"]: (step.get("working-directory", default), step["run"])
        for step in job["steps"]
        if "run" in step
    }


def hook() -> dict[str, Any]:
    [repo] = yaml.safe_load(PRE_COMMIT.read_text())["repos"]
    [found] = repo["hooks"]
    assert repo["repo"] == "local"
    hook_: dict[str, Any] = found
    return hook_


def run_script(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A step's script as the runner runs it, with this environment's ``pit-harness``
    first on PATH (CI has installed it by then)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        [*SHELL, script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
