"""Whether a run's score came from memory: the rule a board flags a run by.

The shifted arm serves the same filings as the main arm with every date moved ten years,
so an agent that reads the filings scores alike on both, and one that recognises the
real period does better on the main arm. The rule reads two stored facts: the platform
figures' 95% interval for main minus shifted at the pit clock (``Rescore.delta_intervals``,
a paired block bootstrap), and the mask probe's verdict. While the mask holds (the probe
could not get a real date out of the agent, so the shifted arm did hide the period) an
interval wholly above zero is a score from memory: the main arm beat its own filings,
dated otherwise, by more than chance explains. A mask that leaks leaves no control to
measure against; an interval touching zero, or below it, shows no sign of memory (a
negative delta measures none: masked deltas also carry lost information and distraction).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

MemoryVerdict = Literal["score_from_memory", "no_sign_of_memory", "control_void", "not_measured"]
MEMORY_VERDICTS: tuple[str, ...] = get_args(MemoryVerdict)


def memory_verdict(interval: Sequence[float] | None, mask_verdict: str | None) -> MemoryVerdict:
    """``interval``: the pit clock's main minus shifted 95% interval (low, high), None
    where there is none; ``mask_verdict``: the probe's (``mask_holds``, ``mask_leaks``,
    ``inconclusive``, ``no_items``, or None when no probe ran)."""
    if mask_verdict == "mask_leaks":
        return "control_void"
    if mask_verdict != "mask_holds" or interval is None:
        return "not_measured"
    low, _high = interval
    return "score_from_memory" if low > 0 else "no_sign_of_memory"
