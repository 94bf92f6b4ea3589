"""Decision points as JSONL for other eval tools, and the tools rebound from one.

One line per session, read as meant by each tool it is written for:

- Inspect's ``json_dataset()``: ``input`` (the prompt the runner would give), ``target``,
  ``id`` and ``metadata``.
- promptfoo's ``file://samples.jsonl``: ``vars``, every value a scalar (a list would be
  expanded into a test case per item, a null warned about), with the prompt as
  ``vars.prompt``.
- lm-evaluation-harness: every value a string or an integer, as ``FIELDS`` declares, so a
  task that declares them keeps every timestamp the string it is, ``Z`` included
  (``examples/lm-eval``: its loader parses the lines itself, since ``datasets``' JSON
  loader lets pyarrow read ISO strings as naive timestamps, declared features or not).

A trading decision has no right answer to compare with, so ``target`` is empty and
``metadata.scorer`` names the scorer that means something here: ``knowable_picks``, the
fraction of the picks that were knowable at the bell (``examples/inspect``). No tools
travel with a sample: ``session_tools`` rebinds them from the metadata (the release's
content digest, the window, the session), so a run driven from the file still reads the
window through the harness. On the shifted arm ids and metadata carry only shifted dates,
the window included, and no release name (one may carry the real window).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from harness import canonical
from harness.market.calendar import SessionTable, sessions_for
from harness.market.clocks import first_knowing_bell, iso_utc, known_at
from harness.release.arms import SHIFT_YEARS, shift_iso
from harness.release.bundle import Bundle
from harness.release.store import ReleaseError
from harness.runs.observe import trade_prompt
from harness.tools.toolbox import ArmRows, ClockIndex, Toolbox
from harness.vocabulary import CLOCKS

# The scorer the examples ship for these samples (README: "Inspect").
SCORER = "knowable_picks"

# Every key of a sample's metadata (and of its vars, with ``prompt``), with its type: what
# a consumer declares (the lm-eval task's features), so no loader guesses a type.
FIELDS: dict[str, type] = {
    "arm": str,
    "clock": str,
    "session_date": str,
    "known_at": str,
    "session_number": int,
    "newly_knowable": int,
    "hold_sessions": int,
    "window_start": str,
    "window_end": str,
    "forms": str,
    "rows_in_window": int,
    "bundle_content_digest": str,
    "release": str,  # absent on the shifted arm
    "scorer": str,
}


def _sessions(bundle: Bundle) -> tuple[SessionTable, range]:
    """The session table around the bundle's window, and the window's sessions in it."""
    start, end = date.fromisoformat(bundle.start), date.fromisoformat(bundle.end)
    table = sessions_for(start, end)
    return table, table.window(start, end)


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
    table, window = _sessions(bundle)
    opens = [table.opens[s] for s in window]
    # newly knowable at session n: the first bell at which the row is knowable (the
    # clocks' rule, as the runner's ClockIndex counts it), counted as the rows stream by
    new_at = [0] * (len(opens) + 1)
    for segment in bundle.iter_segments("main"):
        for line in segment:
            new_at[first_knowing_bell(opens, known_at(json.loads(line), clock)[0])] += 1
    shift = arm == "shifted"
    shown = shift_iso if shift else str
    shared: dict[str, Any] = {
        "arm": arm,
        "clock": clock,
        "hold_sessions": hold_sessions,
        "window_start": shown(bundle.start),
        "window_end": shown(bundle.end),
        "forms": ",".join(bundle.forms),
        "rows_in_window": bundle.row_count,
        "bundle_content_digest": bundle.content_digest,
        "scorer": SCORER,
    }
    if not shift:
        shared["release"] = bundle.name
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(target, "w", encoding="utf-8") as handle:
        for n, s in enumerate(window):
            day = shown(table.sessions[s].isoformat())
            bell = shown(iso_utc(table.opens[s]))
            prompt = trade_prompt(
                arm=arm,
                clock=clock,
                session_date=day,
                known_at=bell,
                new=new_at[n],
                hold=hold_sessions,
            )
            metadata = {
                **shared,
                "session_date": day,
                "known_at": bell,
                "newly_knowable": new_at[n],
                "session_number": n,
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


class RebindError(ValueError):
    """A sample's metadata does not name a session of the release at hand."""


def session_tools(
    release: str | os.PathLike[str],
    metadata: dict[str, Any],
    record: Callable[[str, dict[str, Any], dict[str, Any], list[str] | None], None] | None = None,
) -> Toolbox:
    """The four tools of an exported sample's session, rebound from its metadata over
    the release at ``release``: the same answers the runner's cell would give at that
    bell. ``record`` sees every call (tool, arguments, result, served rows' text).

    Refused (``RebindError``) when the release is another one (content digest), or the
    window, its row count or the session's date do not come out as the sample says.
    """
    arm, clock = str(metadata["arm"]), str(metadata["clock"])
    unshown = (lambda text: shift_iso(text, -SHIFT_YEARS)) if arm == "shifted" else str
    try:
        bundle = Bundle.load(
            release,
            forms=[f for f in str(metadata["forms"]).split(",") if f],
            start=unshown(str(metadata["window_start"])),
            end=unshown(str(metadata["window_end"])),
        )
    except (ReleaseError, ValueError) as exc:
        raise RebindError(f"sample {metadata.get('session_date')}: {exc}") from None
    if bundle.content_digest != metadata["bundle_content_digest"]:
        raise RebindError(
            f"the sample is of release {metadata['bundle_content_digest']}, "
            f"not of {bundle.content_digest}"
        )
    if bundle.row_count != metadata["rows_in_window"]:
        raise RebindError(
            f"the window has {bundle.row_count} rows, the sample says {metadata['rows_in_window']}"
        )
    table, window = _sessions(bundle)
    n = int(metadata["session_number"])
    if not 0 <= n < len(window):
        raise RebindError(f"session_number {n} is outside the window's {len(window)} sessions")
    s = window[n]
    main = bundle.rows("main")
    tools = Toolbox(
        arm=arm,
        index=ClockIndex.build(main, clock),
        rows=ArmRows(bundle.texts(arm), bundle.rows(arm), [row["form"] for row in main]),
        positions={key: i for i, key in enumerate(bundle.row_keys(arm))},
        bell=table.opens[s],
        previous_bell=table.opens[s - 1] if n > 0 else None,
        session_date=table.sessions[s].isoformat(),
        record=record or (lambda *_: None),
    )
    if tools.session_date != metadata["session_date"] or tools.known_at != metadata["known_at"]:
        raise RebindError(
            f"session {n} of the window is {tools.session_date} {tools.known_at}, "
            f"the sample says {metadata['session_date']} {metadata['known_at']}"
        )
    return tools
