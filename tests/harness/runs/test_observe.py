"""The observation seam: every task an agent is shown is built in harness.runs.observe."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, run
from harness.agents.adapters.plain import from_callable
from harness.agents.base import Task
from harness.runs import export, observe
from harness.tools.toolbox import Toolbox

WINDOW = {"forms": ("8-K",), "start": "2023-03-01", "end": "2023-03-10"}


def _config(release: Path, out: Path, **extra: Any) -> RunConfig:
    return RunConfig(
        bundle_path=str(release),
        **WINDOW,
        trajectory_path=str(out / "trajectory.jsonl"),
        receipt_path=str(out / "receipt.json"),
        agent_process="in_process",
        **extra,
    )


def test_each_dialect_is_one_entry_of_the_table() -> None:
    assert observe.dialect(None) is observe.PIT  # a Python agent is shown ours
    assert observe.dialect("pit") is observe.PIT
    assert observe.dialect("sharpebench") is observe.SHARPEBENCH
    assert observe.PIT.asks_probe and not observe.SHARPEBENCH.asks_probe
    assert observe.SHARPEBENCH.reports_ignored_orders and not observe.PIT.reports_ignored_orders


def test_export_writes_the_prompt_the_seam_builds() -> None:
    assert export.trade_prompt is observe.trade_prompt


def test_a_changed_view_reaches_the_agent_through_the_seam_alone(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a fault plan would do: change only what the agent is shown, in one place."""
    shown: list[str] = []

    def agent(prompt: str, tools: Toolbox) -> list[str]:
        shown.append(prompt)
        return []

    def marked(task: Task, tools: Toolbox, rows: Any, held: Any) -> Task:
        return dataclasses.replace(task, prompt="[changed] " + task.prompt)

    changed = dataclasses.replace(observe.PIT, observe=marked)
    monkeypatch.setattr(observe, "dialect", lambda name: changed)
    body = run(from_callable(agent), _config(march_release, tmp_path)).body
    trades = [p for p in shown if not p.startswith("Mask probe.")]
    assert trades and all(p.startswith("[changed] Session ") for p in trades)
    assert body["probe"]["status"] == "complete"  # the probe is asked as before
