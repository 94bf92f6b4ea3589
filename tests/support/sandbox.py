"""Where the agent's sandbox can run; in CI it must."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig
from harness.tools.toolbox import Toolbox


def require_sandbox() -> None:
    """Skip where bubblewrap cannot run, with the reason; in CI, fail instead."""
    from harness.isolation.sandbox.outside import availability

    available, why = availability()
    if not available:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the sandboxed tests, but {why}")
        pytest.skip(f"needs bubblewrap: {why}")


def sandbox_config(release: Path, out: Path, **extra: Any) -> RunConfig:
    """A short isolated run over the first three sessions of March 2023."""
    values: dict[str, Any] = {
        "bundle_path": str(release),
        "forms": ("8-K",),
        "start": "2023-03-01",
        "end": "2023-03-03",
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
        "agent_process": "isolated",
    }
    values.update(extra)
    return RunConfig(**values)


def crash_when_told(
    monkeypatch: pytest.MonkeyPatch, times: int, dial_first: bool = False
) -> list[str]:
    """The harness tells the agent to end its process on main/leaky's second session,
    ``times`` times (each a failed attempt on our side, as a died process is); with
    ``dial_first``, it first tells it to dial out, once, in the first attempt only."""
    original = Toolbox.pit_coverage
    told: list[str] = []

    def crash(self: Toolbox) -> dict[str, Any]:
        result = original(self)
        first_cell = self.arm == "main" and self.clock == "leaky"
        if dial_first and first_cell and not told:
            result = {**result, "dial_now": self.session_date == "2023-03-01"}
        if len(told) < times and first_cell and self.session_date != "2023-03-01":
            told.append(self.session_date)
            return {**result, "crash_now": True}
        return result

    monkeypatch.setattr(Toolbox, "pit_coverage", crash)
    return told
