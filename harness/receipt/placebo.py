"""The placebo split: the contamination delta before and after a declared training cutoff.

A model that remembers the period it is tested on can remember only what it was trained
on. When a run's window crosses the cutoff its config declares, the delta (main minus
each control arm) is computed twice: over the trades entered on or before the cutoff and
over those entered after it. Memory predicts a delta before and none after; a delta that
persists after the cutoff is something memory cannot explain (the control is not
controlling, or the edge is not memory).

Each side's delta is the cells' own figure (mean return of the priced trades, main minus
control, as ``Rescore.deltas`` takes it) and its interval the paired block bootstrap
every platform delta is drawn with (``harness.receipt.bootstrap``). The trades are given
as scored: a control arm's already on the main arm's sessions, joined through the
release's index. Pure: the same trades, the same split, on any machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from harness.market.scoring import Trade, delta, total_return
from harness.receipt.bootstrap import delta_bootstrap

Side = Literal["before", "after"]
SIDES: tuple[Side, Side] = ("before", "after")
CONTROLS = ("shifted", "redacted")
# Fewer than these on a side and its interval is no reading: with one or two entry
# sessions the bootstrap redraws the same few blocks, and its interval is narrow for
# want of data, not for certainty.
MIN_TRADES = 5  # priced trades on each arm (main and shifted)
MIN_SESSIONS = 3  # entry sessions with a priced trade


def split_rule(cutoff: str) -> str:
    """The split as the artifact states it: which trades fall on which side."""
    return (
        f"before: trades whose entry session is on or before {cutoff}; after: trades entered "
        "after it; sessions: the side's entry sessions with a priced trade"
    )


def side_of(trade: Trade, cutoff: str) -> Side:
    """The cutoff day is in the training data, as P2's check takes it."""
    return "before" if trade.entry_session <= cutoff else "after"


def placebo(
    trades: Mapping[tuple[str, str], Sequence[Trade]], clocks: Iterable[str], cutoff: str
) -> dict[str, Any]:
    """The split of every clock that has a main arm: per side, the priced trades of each
    arm, the deltas main minus each control arm the run had and their 95% intervals (null
    where an arm has no priced trade on that side)."""
    split: dict[str, Any] = {}
    for clock in clocks:
        main = trades.get(("main", clock))
        if main is None:
            continue
        controls = {a: trades[(a, clock)] for a in CONTROLS if (a, clock) in trades}
        split[clock] = {
            side: _side(
                [t for t in main if side_of(t, cutoff) == side],
                {a: [t for t in c if side_of(t, cutoff) == side] for a, c in controls.items()},
            )
            for side in SIDES
        }
    return {"cutoff": cutoff, "split": split_rule(cutoff), "clocks": split}


def _side(main: list[Trade], controls: dict[str, list[Trade]]) -> dict[str, Any]:
    priced = [t for t in main if t.ret is not None]
    sessions = {t.entry_session for t in priced}
    figures: dict[str, Any] = {"main_trades": len(priced)}
    for arm, trades in controls.items():
        sessions |= {t.entry_session for t in trades if t.ret is not None}
        figures[f"{arm}_trades"] = sum(1 for t in trades if t.ret is not None)
        figures[f"main_minus_{arm}"] = delta(total_return(main), total_return(trades))
        interval = delta_bootstrap(main, trades)
        figures[f"main_minus_{arm}_interval_95"] = None if interval is None else list(interval)
    return {"sessions": len(sessions), **figures}


# -- what the intervals support, in words --------------------------------------------------


def _pp(interval: Sequence[float]) -> str:
    return f"{interval[0] * 100:+.2f} to {interval[1] * 100:+.2f} pp"


def _where(interval: Sequence[float]) -> str:
    if interval[0] > 0:
        return "above"
    return "below" if interval[1] < 0 else "spans"


def _too_few(side: Mapping[str, Any]) -> bool:
    return (
        side.get("main_minus_shifted_interval_95") is None
        or int(side.get("main_trades") or 0) < MIN_TRADES
        or int(side.get("shifted_trades") or 0) < MIN_TRADES
        or int(side.get("sessions") or 0) < MIN_SESSIONS
    )


def placebo_reading(placebo: Mapping[str, Any], clock: str) -> str:
    """One sentence on a clock's split of main minus shifted that says only what its two
    95% intervals support."""
    sides = (placebo.get("clocks") or {}).get(clock)
    if not sides:
        return f"No placebo split at the {clock} clock."
    before, after = sides["before"], sides["after"]
    if "main_minus_shifted" not in before:
        return f"The run has no shifted arm, so there is no {clock}-clock delta to split."
    short = [name for name, side in (("before", before), ("after", after)) if _too_few(side)]
    if short:
        where = " and ".join(f"{s} the cutoff" for s in short)
        return (
            f"Too few priced trades {where} (fewer than {MIN_TRADES} on the main or the "
            f"shifted arm, or fewer than {MIN_SESSIONS} entry sessions) to read the split "
            f"at the {clock} clock."
        )
    low, high = before["main_minus_shifted_interval_95"], after["main_minus_shifted_interval_95"]
    was, now = _where(low), _where(high)
    said = f"before the cutoff {_pp(low)}, after it {_pp(high)}"
    head = f"At the {clock} clock main minus shifted"
    if now == "above":
        return (
            f"{head} lies above zero after the cutoff too ({said}): the delta persists past "
            "the cutoff, so the shifted arm may not be controlling what it should, or the "
            "edge is not memory."
        )
    if was == "above" and now == "spans":
        return (
            f"{head} lies above zero before the cutoff and its interval after it contains "
            f"zero ({said}): consistent with memory of the period before the cutoff."
        )
    if was == "spans" and now == "spans":
        return (
            f"At the {clock} clock neither interval of main minus shifted excludes zero "
            f"({said}): the split shows nothing either way."
        )
    words = {"above": "above zero", "below": "below zero", "spans": "not distinguishable from zero"}
    return (
        f"{head} is {words[was]} before the cutoff and {words[now]} after it ({said}): not "
        "the pattern memory predicts (a delta above zero before, none after); a delta below "
        "zero measures no memory."
    )
