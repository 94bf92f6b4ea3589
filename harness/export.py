"""Decision points as JSONL for other eval tools.

One line per session: the prompt the runner would give (``input``), an empty
``target``, an ``id`` and ``metadata``, which Inspect's ``json_dataset()`` reads as
Samples, and the same prompt under ``vars`` for promptfoo's ``file://`` test cases.
No tools travel with a sample: a run driven from the file still reads the window
through the harness. On the shifted arm ids and metadata carry only shifted dates.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from harness import canonical
from harness.calendar import sessions_for
from harness.clocks import CLOCKS, iso_utc
from harness.release.arms import shift_iso
from harness.release.bundle import Bundle
from harness.runner import trade_prompt
from harness.tools import ClockIndex


def export_points(
    bundle: Bundle, *, arm: str, clock: str, out: str | os.PathLike[str], hold_sessions: int = 5
) -> int:
    if clock not in CLOCKS:
        raise ValueError(f"unknown clock {clock!r} (clocks: {', '.join(CLOCKS)})")
    rows = bundle.rows(arm)  # validates the arm name
    index = ClockIndex.build(bundle.rows("main"), clock)
    table = sessions_for(date.fromisoformat(bundle.start), date.fromisoformat(bundle.end))
    window = table.window(date.fromisoformat(bundle.start), date.fromisoformat(bundle.end))
    shift = arm == "shifted"
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(target, "w", encoding="utf-8") as handle:
        for n, s in enumerate(window):
            day = table.sessions[s].isoformat()
            bell = iso_utc(table.opens[s])
            shown_day, shown_bell = (shift_iso(day), shift_iso(bell)) if shift else (day, bell)
            new_from = 0 if n == 0 else index.knowable(table.opens[s - 1])
            new = index.knowable(table.opens[s]) - new_from
            prompt = trade_prompt(
                arm=arm,
                clock=clock,
                session_date=shown_day,
                known_at=shown_bell,
                new=new,
                hold=hold_sessions,
            )
            metadata = {
                "arm": arm,
                "clock": clock,
                "session_date": shown_day,
                "known_at": shown_bell,
                "newly_knowable": new,
                "session_number": n,
                # a release name may carry the real window ("...-20230301-..."): not on shifted
                "release": None if shift else bundle.name,
                "bundle_content_digest": bundle.content_digest,
                "forms": list(bundle.forms),
                "rows_in_window": len(rows),
            }
            sample = {
                "id": f"{arm}-{clock}-{n:04d}",
                "input": prompt,
                "target": "",
                "metadata": metadata,
                "vars": {"prompt": prompt, **metadata},
            }
            handle.write(canonical.line(sample) + "\n")
            count += 1
    return count
