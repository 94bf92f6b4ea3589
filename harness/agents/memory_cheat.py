"""memory_cheat: a DELIBERATE CHEAT, made for the demo, that scores from memory.

It stands for a model that remembers the period it is tested on. Ahead of the run,
``remember`` computes, with the harness's own clocks and scoring, which (issuer, filing
date) pairs of a release rose over the holding period in a price file: the answers.
``write_memory`` keeps them in a JSON file, and the agent is this program run over the
wire protocol (pit/1, stdio) with that file as its argument:

    python3 memory_cheat.py memory.json

Both files are named on its command line, so both sha256s are part of the agent's
identity in the receipt: the memory is bound to the run like the code. The agent never
sees a price: its tools show filings only. At each bell it lists the new filings and
buys those it remembers rising, skips those it remembers falling and buys the ones it
does not recognise, as the stub would. On the main arm it recognises them and wins. On
the shifted arm every date is ten years on and on the redacted arm the issuer is gone,
so it recognises nothing, buys like the stub, and its edge is gone: the main arm beats
the shifted one by more than chance explains, which the site calls a score from memory.
Asked by the mask probe for a row's real date and issuer, it says it cannot tell (it
reads no dates back), so the mask holds and the shifted arm stays a valid control.

The program itself imports only the standard library: it runs alone, inside the
cell's sandbox, with no harness on its path.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os

    from harness.market.prices import Prices

ABOUT = (
    "DELIBERATE CHEAT for the demo: which (issuer, filing date) pairs rose over the "
    "holding period in the price file named here, computed ahead of the run. A memory of "
    "the answers, not a forecast."
)


def remember(
    release: str | os.PathLike[str],
    prices: Prices,
    *,
    forms: tuple[str, ...],
    start: str,
    end: str,
    hold_sessions: int,
    clock: str = "pit",
) -> dict[str, Any]:
    """The memory: for each (issuer, partition date) of the window's rows with a priced
    trade at ``clock``, whether their mean return over ``hold_sessions`` rose, priced as
    the runner prices a trade (``harness.market.scoring.make_trades``)."""
    from datetime import date

    from harness.market.calendar import sessions_for
    from harness.market.clocks import known_at
    from harness.market.scoring import make_trades
    from harness.release.bundle import Bundle

    bundle = Bundle.load(release, forms=forms, start=start, end=end)
    rows = bundle.rows("main")
    table = sessions_for(date.fromisoformat(bundle.start), date.fromisoformat(bundle.end))
    entries: dict[int, list[str]] = {}
    for row in rows:
        entry = table.first_open_after(known_at(row, clock)[0])
        entries.setdefault(entry, []).append(row["row_key"])
    by_key = {row["row_key"]: row for row in rows}
    trades = make_trades(
        sorted(entries.items()),
        main_by_key=by_key,
        table=table,
        hold_sessions=hold_sessions,
        prices=prices,
    )
    returns: dict[tuple[str, str], list[float]] = {}
    for trade in trades:
        row = by_key[trade.row_key]
        if trade.ret is not None and row.get("issuer"):
            returns.setdefault((row["issuer"], row["partition_date"]), []).append(trade.ret)
    return {
        "about": ABOUT,
        "release": bundle.content_digest,
        "prices": prices.reference(),
        "forms": sorted(forms),
        "window": [start, end],
        "clock": clock,
        "hold_sessions": hold_sessions,
        "remembered": [
            {"issuer": issuer, "date": day, "rose": sum(found) / len(found) > 0}
            for (issuer, day), found in sorted(returns.items())
        ],
    }


def write_memory(path: str | os.PathLike[str], memory: dict[str, Any]) -> None:
    """The memory as the agent reads it (canonical JSON: the same memory, the same
    bytes, the same sha256 in the receipt)."""
    from pathlib import Path

    from harness import canonical

    Path(path).write_text(canonical.dumps(memory) + "\n", encoding="utf-8")


# -- the agent: this file run as a program -------------------------------------------------


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _receive() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def decide(rows: list[dict[str, Any]], rose: dict[tuple[str, str], bool]) -> dict[str, Any]:
    """The decision on the filings new at this bell: buy what it remembers rising and
    what it does not recognise; skip what it remembers falling."""
    picks, recognised = [], 0
    for row in rows:
        remembered = rose.get((row.get("issuer") or "", row.get("partition_date") or ""))
        recognised += remembered is not None
        if remembered is not False:
            picks.append(row["row_key"])
    text = f"recognised {recognised} of {len(rows)} new filings; buying {len(picks)}"
    return {"type": "decision", "picks": picks, "text": text}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: python3 memory_cheat.py MEMORY.json\n")
        return 2
    with open(argv[1], encoding="utf-8") as file:
        memory = json.load(file)
    rose = {(m["issuer"], m["date"]): bool(m["rose"]) for m in memory["remembered"]}
    while (task := _receive()) is not None:
        if task.get("kind") != "trade":
            _send({"type": "decision", "picks": [], "text": "I cannot tell."})
            continue
        _send({"type": "tool", "tool": "pit_list", "args": {"limit": None}})
        reply = _receive()
        if reply is None or reply.get("type") != "result":
            return 1
        _send(decide(reply["result"].get("rows") or [], rose))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
