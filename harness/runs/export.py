"""Decision points as JSONL for other eval tools.

One line per session: the prompt the runner would give (``input``), an empty
``target``, an ``id`` and ``metadata``, which Inspect's ``json_dataset()`` reads as
Samples, and the same prompt under ``vars`` for promptfoo's ``file://`` test cases.
No tools travel with a sample: a run driven from the file still reads the window
through the harness. On the shifted arm ids and metadata carry only shifted dates.
"""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path

from harness import canonical
from harness.market.calendar import sessions_for
from harness.market.clocks import first_knowing_bell, iso_utc, known_at
from harness.release.arms import shift_iso
from harness.release.bundle import Bundle
from harness.runs.runner import trade_prompt
from harness.vocabulary import CLOCKS


def export_points(
    bundle: Bundle, *, arm: str, clock: str, out: str | os.PathLike[str], hold_sessions: int = 5
) -> int:
    """Write one sample per session of the bundle's window; return how many.

    The rows are read a segment at a time (each checked against the index) and only
    counted: memory is bounded by one segment, whatever the window's size.
    """
    if clock not in CLOCKS:
        raise ValueError(f"unknown clock {clock!r} (clocks: {', '.join(CLOCKS)})")
    for _ in bundle.iter_segments(arm):  # validates the arm name and checks its bytes
        pass
    table = sessions_for(date.fromisoformat(bundle.start), date.fromisoformat(bundle.end))
    window = table.window(date.fromisoformat(bundle.start), date.fromisoformat(bundle.end))
    opens = [table.opens[s] for s in window]
    # newly knowable at session n: the first bell at which the row is knowable (the
    # clocks' rule, as the runner's ClockIndex counts it), counted as the rows stream by
    new_at = [0] * (len(opens) + 1)
    for segment in bundle.iter_segments("main"):
        for line in segment:
            new_at[first_knowing_bell(opens, known_at(json.loads(line), clock)[0])] += 1
    shift = arm == "shifted"
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(target, "w", encoding="utf-8") as handle:
        for n, s in enumerate(window):
            day = table.sessions[s].isoformat()
            bell = iso_utc(table.opens[s])
            shown_day, shown_bell = (shift_iso(day), shift_iso(bell)) if shift else (day, bell)
            new = new_at[n]
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
                "rows_in_window": bundle.row_count,
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
