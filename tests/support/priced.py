"""An agent run over the demo's benchmark (8-Ks, 2023-03-01..03-10, hold 5) in the
harness's process and priced as the site prices it: its platform figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import RunConfig, run
from harness.agents.external import configured_agent
from harness.market.prices import load_prices
from harness.receipt.rescore import Rescore, rescore

FORMS = ("8-K",)
START, END = "2023-03-01", "2023-03-10"
HOLD = 5


def priced_run(
    out: Path, release: Path, prices: Path, **agent: str
) -> tuple[Rescore, dict[str, Any]]:
    """``agent``: ``agent=NAME`` or ``agent_cmd=COMMAND``. The platform figures (priced
    with ``prices``) and the receipt's body."""
    config = RunConfig(
        bundle_path=str(release),
        forms=FORMS,
        start=START,
        end=END,
        hold_sessions=HOLD,
        agent_process="in_process",
        prices={"path": str(prices), "source": "SYNTHETIC test prices", "pulled_at": "generated"},  # type: ignore[arg-type]
        trajectory_path=str(out / "trajectory.jsonl"),
        receipt_path=str(out / "receipt.json"),
        **agent,  # type: ignore[arg-type]
    )
    result = run(configured_agent(config), config)
    figures = rescore(
        out / "receipt.json",
        trajectory=out / "trajectory.jsonl",
        release=release,
        prices=load_prices(prices, source="SYNTHETIC test prices", pulled_at="generated"),
    )
    return figures, result.body


def pit(figures: Rescore, arm: str) -> tuple[float, float, float]:
    """An arm's pit figure: (return, interval low, interval high)."""
    cell = figures.cells[(arm, "pit")]
    assert cell.total_return is not None and cell.low is not None and cell.high is not None
    return cell.total_return, cell.low, cell.high
