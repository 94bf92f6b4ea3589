"""``pit-harness prices``: synthetic price files for demos."""

from __future__ import annotations

import argparse
from datetime import date

from harness.cli.common import day
from harness.market.prices import synth_prices
from harness.outcomes import EXIT_OK
from harness.release.bundle import Bundle


def cmd_prices_synth(args: argparse.Namespace) -> int:
    bundle = Bundle.load(args.bundle)
    symbols = sorted({r["ticker"] for r in bundle.rows("main") if r.get("ticker")})
    end = args.end or date.fromisoformat(bundle.end)
    bars = synth_prices(
        args.out, symbols=symbols, start=date.fromisoformat(bundle.start), end=end, seed=args.seed
    )
    print(f"SYNTHETIC prices: {bars} bars for {len(symbols)} tickers written to {args.out}")
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``prices synth``."""
    prices = sub.add_parser("prices", help="price files (synthetic ones for demos)")
    psub = prices.add_subparsers(dest="prices_command", required=True)
    psynth = psub.add_parser(
        "synth",
        help="SYNTHETIC daily open/close random walks for every ticker of a release (demo only)",
    )
    psynth.add_argument("--bundle", required=True, help="release folder whose tickers to price")
    psynth.add_argument("--out", required=True, help="CSV to write (date,symbol,open,close)")
    psynth.add_argument("--seed", type=int, default=0)
    psynth.add_argument(
        "--end",
        type=day,
        help="last session to price (default: release end; leave room for holds)",
    )
    psynth.set_defaults(func=cmd_prices_synth)
