"""``pit-harness prices``: synthetic price files for demos."""

from __future__ import annotations

import argparse
from datetime import date

from harness.cli.common import day
from harness.market.prices import news_sessions, synth_prices
from harness.outcomes import EXIT_OK
from harness.release.bundle import Bundle


def cmd_prices_synth(args: argparse.Namespace) -> int:
    bundle = Bundle.load(args.bundle)
    rows = bundle.rows("main")
    symbols = sorted({r["ticker"] for r in rows if r.get("ticker")})
    end = args.end or date.fromisoformat(bundle.end)
    bars = synth_prices(
        args.out, symbols=symbols, start=date.fromisoformat(bundle.start), end=end, seed=args.seed,
        news=news_sessions(rows, form=args.news) if args.news else None, market=args.market,
        market_volatility=args.market_volatility,
    )  # fmt: skip
    print(f"SYNTHETIC prices: {bars} bars for {len(symbols)} tickers written to {args.out}")
    if args.market:
        print(f"  with a SYNTHETIC market index {args.market} each stock moves on")
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
    psynth.add_argument(
        "--news",
        metavar="FORM",
        help="a market that moves on news (make demo's): a stock rises 2%% over the first "
        "session one of its FORM filings is knowable at the pit clock, then gives it back "
        "over the next ten (default: plain random walks)",
    )
    psynth.add_argument(
        "--market",
        metavar="SYMBOL",
        help="also write a SYNTHETIC market index under SYMBOL, each stock moving on it by a "
        "beta of its own (0.5 to 1.5): an index for a run's benchmark_index",
    )
    psynth.add_argument(
        "--market-volatility",
        type=float,
        default=0.01,
        metavar="SD",
        help="the SYNTHETIC market's standard deviation a session (default 0.01)",
    )
    psynth.set_defaults(func=cmd_prices_synth)
