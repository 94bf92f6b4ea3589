"""The seed's clock experiment, read off one run: per clock on the main arm, the return
and the trades bought at an opening auction that had begun before EDGAR accepted the
filing (of the trades whose filing carries an acceptance stamp).

On the seed's data (88 8-K filings of twelve issuers, 2022-11-01..2023-03-31) this reads
+5.13% on the naive filed-date join (leaky), -2.02% waiting for the nightly dump and
+0.18% on the acceptance stamp (pit), with 47 of the 64 stamped filings bought before
they were accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.market.clocks import acceptance_instant
from harness.market.scoring import total_return
from harness.runs.finish import RunResult


@dataclass(frozen=True)
class ClockLine:
    clock: str
    total_return: float | None
    trades: int
    priced: int
    entered_before_acceptance: int  # as the receipt's cell counts them
    stamped: int  # trades whose filing carries acceptance_at
    reachable: bool


def clock_report(result: RunResult, arm: str = "main") -> list[ClockLine]:
    cells = {(c["arm"], c["clock"]): c for c in result.body["cells"]}
    lines = []
    for (cell_arm, clock), cell in cells.items():
        if cell_arm != arm:
            continue
        trades = result.trades(arm, clock)
        stamped = sum(1 for t in trades if acceptance_instant(result.main_row(t.row_key)))
        lines.append(
            ClockLine(
                clock=clock,
                total_return=total_return(trades),
                trades=len(trades),
                priced=sum(1 for t in trades if t.status == "priced"),
                entered_before_acceptance=int(cell["entered_before_acceptance"]),
                stamped=stamped,
                reachable=bool(cell["reachable"]),
            )
        )
    return lines
