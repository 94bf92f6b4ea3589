"""What the command groups share: the usage error, dates and returns as the command line
reads and prints them, and the options that name an external agent."""

from __future__ import annotations

import argparse
from datetime import date


class UsageError(Exception):
    pass


def day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def fmt_return(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.2f}%"


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
