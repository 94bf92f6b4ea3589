"""Runs for the gate's tests: an agent over the demo's benchmark (8-Ks, 2023-03-01..03-10,
hold 5) in the harness's process, and the memory cheat as a Python agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import RunConfig, run
from harness.agents.base import AgentSpec, Decision
from harness.agents.memory_cheat import decide, remember
from harness.market.prices import load_prices

FORMS, START, END, HOLD = ("8-K",), "2023-03-01", "2023-03-10", 5
SOURCE = "SYNTHETIC test prices"


def gated_run(
    out: Path, release: Path, prices: Path | None, agent: AgentSpec, **extra: Any
) -> Path:
    """The run's receipt (its trajectory beside it); ``extra``: RunConfig's keys."""
    config: dict[str, Any] = {
        "bundle_path": str(release),
        "forms": FORMS,
        "start": START,
        "end": END,
        "hold_sessions": HOLD,
        "agent_process": "in_process",
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
    }
    if prices is not None:
        config["prices"] = {"path": str(prices), "source": SOURCE, "pulled_at": "generated"}
    run(agent, RunConfig(**{**config, **extra}))
    return out / "receipt.json"


def remembering(release: Path, prices: Path) -> AgentSpec:
    """The demo's memory cheat (``harness.agents.memory_cheat``) in the harness's process:
    it buys the filings it remembers rising and skips those it remembers falling, which it
    recognises on the main arm only; on a control arm it buys everything, as the stub."""
    memory = remember(
        release,
        load_prices(prices, source=SOURCE, pulled_at="generated"),
        forms=FORMS,
        start=START,
        end=END,
        hold_sessions=HOLD,
    )
    rose = {(m["issuer"], m["date"]): bool(m["rose"]) for m in memory["remembered"]}

    class Remembering:
        def decide(self, task: Any, tools: Any) -> Decision:
            if task.kind != "trade":
                return Decision(text="I cannot tell.")
            rows = tools.pit_list(limit=None)["rows"]
            return Decision(picks=tuple(decide(rows, rose)["picks"]))

    return AgentSpec("remembering", Remembering)
