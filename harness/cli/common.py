"""What the command groups share: the usage error, a JSON file read as a reader's document,
dates and returns as the command line reads and prints them (a placebo split among them), and
the options that name an external agent."""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path
from typing import Any

from harness.receipt.placebo import SIDES, placebo_reading
from harness.vocabulary import CLOCKS


class UsageError(Exception):
    pass


def read_json_document(path: str) -> Any:
    """A JSON file a reader names, parsed; a usage error (exit 2) when it cannot be read:
    a file that is missing or not JSON is the reader's slip, not a broken document."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise UsageError(f"{path}: not a readable JSON document ({exc})") from None


def day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def fmt_return(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.2f}%"


def placebo_lines(split: dict[str, Any]) -> list[str]:
    """A placebo split as ``run`` and ``verify`` print it: per clock, main minus shifted
    before and after the cutoff with its 95% interval and trades (main v shifted), then
    the one sentence its intervals support."""
    lines = [f"  placebo split at the declared cutoff {split['cutoff']}  ({split['split']})"]
    for clock in [c for c in CLOCKS if c in split["clocks"]]:
        for side in SIDES:
            part = split["clocks"][clock][side]
            interval = part.get("main_minus_shifted_interval_95")
            bounds = (
                f"[{fmt_return(interval[0])}, {fmt_return(interval[1])}]" if interval else "n/a"
            )
            lines.append(
                f"    {clock if side == 'before' else '':<6} {side:<6} main-shifted "
                f"{fmt_return(part.get('main_minus_shifted')):>8}  95% {bounds:<20}  trades "
                f"{part['main_trades']} main, {part.get('shifted_trades', 0)} shifted"
            )
        lines.append(f"           {placebo_reading(split, clock)}")
    return lines


def external_agent_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent-cmd",
        metavar="CMD",
        help="an agent in another process, in any language: a command started afresh in "
        "each cell (in the cell's sandbox), spoken to with one JSON object per line on its "
        "stdin and stdout; every word naming a file is shown to it read-only at its own path "
        "(overrides agent_cmd; instead of --agent)",
    )
    parser.add_argument(
        "--agent-http",
        metavar="URL",
        help="an agent that is an HTTP service (it runs outside the harness's sandbox: "
        "agent_process=remote): sharpebench's dialect as POST URL/decide per decision, ours as "
        "POST URL/step per message (overrides agent_http; instead of --agent)",
    )
    parser.add_argument(
        "--dialect",
        choices=["pit", "sharpebench"],
        help="the wire protocol the external agent speaks: pit (tasks, tool calls, decisions; "
        "the default) or sharpebench (a MarketObservation per session, a Decision of orders) "
        "(overrides dialect)",
    )
    parser.add_argument(
        "--agent-dir",
        action="append",
        metavar="DIR",
        help="a folder shown read-only to the --agent-cmd agent too (its other files, a "
        "virtual environment); repeatable; hashed into the agent's digest",
    )


def index_arguments(parser: argparse.ArgumentParser, *, symbol: bool) -> None:
    """``--index FILE`` (and, where no receipt names it, ``--index-symbol``)."""
    parser.add_argument(
        "--index",
        metavar="FILE",
        help="a market index's price file: each cell's excess return, beta and alpha against it",
    )
    if symbol:
        parser.add_argument(
            "--index-symbol", metavar="SYMBOL", help="the index's symbol in that file"
        )


def cost_arguments(parser: argparse.ArgumentParser) -> None:
    """``--cost-bps`` and ``--min-fee``/``--notional``: a stated cost level."""
    parser.add_argument(
        "--cost-bps",
        type=float,
        metavar="BPS",
        help="a fee in basis points of the notional on each side: each figure net of it too",
    )
    parser.add_argument(
        "--min-fee", type=float, default=0.0, help="a minimum fee per side (with --cost-bps)"
    )
    parser.add_argument(
        "--notional",
        type=float,
        default=10_000.0,
        help="each trade's notional, in the minimum fee's currency (default 10000)",
    )


def _beta(market: dict[str, Any]) -> str:
    beta, interval = market.get("beta"), market.get("beta_interval_95")
    if beta is None:
        return "beta n/a"
    shown = f"beta {beta:.2f}"
    return shown + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def measured_lines(
    market: dict[str, Any] | None, *, after_costs: float | None = None, costed: bool = False
) -> list[str]:
    """A cell's figures net of costs and against the market index, in words."""
    lines = []
    if costed:
        lines.append(f"after costs {fmt_return(after_costs):>8}")
    if market is not None:
        alpha = market.get("alpha_per_session")
        up, down = market["up_sessions"], market["down_sessions"]
        lines.append(
            f"excess {fmt_return(market.get('excess_return')):>8}  {_beta(market)}  "
            f"alpha/session {fmt_return(alpha)}  up {up['sessions']} sessions "
            f"{fmt_return(up['mean_return'])}  down {down['sessions']} sessions "
            f"{fmt_return(down['mean_return'])}"
        )
    return lines
