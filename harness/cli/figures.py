"""``pit-harness rescore`` and ``attempts``: platform figures, a run's trades priced with
reference prices, and a family's attempts priced alike."""

from __future__ import annotations

import argparse
import json
import sys

from harness.cli.common import (
    UsageError,
    cost_arguments,
    fmt_return,
    index_arguments,
    measured_lines,
    placebo_lines,
)
from harness.market.frictions import CostError, CostModel
from harness.market.index import load_index
from harness.market.prices import load_prices
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from harness.receipt.attempts import RANKED_CELL, attempts_of, family_best
from harness.receipt.build import read_receipt
from harness.receipt.memory import memory_verdict
from harness.receipt.rescore import RescoreRefused, rescore


def cmd_rescore(args: argparse.Namespace) -> int:
    """Platform figures: the run's trades re-derived and priced with reference prices."""
    prices = load_prices(args.prices, source=args.source, pulled_at=args.pulled_at)
    if bool(args.index) != bool(args.index_symbol):
        raise UsageError("--index and --index-symbol go together")
    try:
        costs = (
            None
            if args.cost_bps is None
            else CostModel(args.cost_bps, min_fee_per_side=args.min_fee, notional=args.notional)
        )
    except CostError as exc:
        raise UsageError(str(exc)) from None
    index = None
    if args.index:
        index = load_index(
            args.index, symbol=args.index_symbol, source=args.source, pulled_at=args.pulled_at
        )
    try:
        result = rescore(
            args.receipt,
            trajectory=args.trajectory,
            release=args.bundle,
            prices=prices,
            costs=costs,
            index=index,
        )
    except RescoreRefused as exc:
        for check in exc.failed:
            print(f"{check.name} MISMATCH  {check.detail}")
        print("pit-harness: no figures: the artifacts do not hold together", file=sys.stderr)
        return EXIT_MISMATCH
    # the board's rule (harness.receipt.memory): the pit delta's interval and the mask
    pit_delta = (result.delta_intervals().get("pit") or {}).get("main_minus_shifted")
    mask = (read_receipt(args.receipt)[0]["body"].get("probe") or {}).get("verdict")
    memory = memory_verdict(pit_delta, mask)
    if args.json:
        print(json.dumps({**result.to_json(), "memory_verdict": memory}, indent=2, sort_keys=True))
        return EXIT_OK
    ref = result.prices
    print(
        f"prices {ref['file']} {ref['file_sha256']}  source {ref['source']!r}  basis {ref['basis']}"
    )
    for (arm, clock), figure in result.cells.items():
        interval = (
            "n/a"
            if figure.low is None
            else f"[{fmt_return(figure.low)}, {fmt_return(figure.high)}]"
        )
        print(
            f"  {arm:<9} {clock:<6} total_return {fmt_return(figure.total_return):>8}"
            f"  95% {interval:<20}  trades {figure.trades:>5}  priced {figure.priced:>5}"
        )
        net = result.after_costs.get((arm, clock))
        for line in measured_lines(
            result.market.get((arm, clock)),
            after_costs=None if net is None else net.total_return,
            costed=net is not None,
        ):
            print(f"  {'':<16}{line}")
    for clock, deltas in result.deltas().items():
        print(
            f"  delta {clock:<6} main-shifted {fmt_return(deltas['main_minus_shifted']):>8}"
            f"  main-redacted {fmt_return(deltas['main_minus_redacted']):>8}"
        )
    shown = (
        "n/a" if pit_delta is None else f"[{fmt_return(pit_delta[0])}, {fmt_return(pit_delta[1])}]"
    )
    print(f"  memory {memory}  (pit main-shifted {shown} at 95%, mask {mask or 'not probed'})")
    split = result.placebo()
    if split is not None:
        print("\n".join(placebo_lines(split)))
    return EXIT_OK


def cmd_attempts(args: argparse.Namespace) -> int:
    """A family's attempts priced alike, and the best one's family-wise interval."""
    prices = load_prices(args.prices, source=args.source, pulled_at=args.pulled_at)
    try:
        attempts = attempts_of(args.receipts, release=args.bundle, prices=prices)
    except RescoreRefused as exc:
        for check in exc.failed:
            print(f"{check.name} MISMATCH  {check.detail}")
        print("pit-harness: no figures: an attempt does not hold together", file=sys.stderr)
        return EXIT_MISMATCH
    result = family_best(attempts)
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
        return EXIT_OK
    cell = "/".join(RANKED_CELL)
    for attempt, _ in attempts:
        figure = attempt.figure
        shown = (
            "no priced figure"
            if figure is None
            else f"{fmt_return(figure.total_return):>8}  95% "
            f"[{fmt_return(figure.low)}, {fmt_return(figure.high)}]"
        )
        print(f"  {attempt.run_id or '-':<16}  {cell} {shown}  {attempt.name}")
    print(
        f"attempts {result.attempts}  family-wise confidence {result.confidence:.4%} "
        f"(Šidák: 0.95^(1/{result.attempts}))"
    )
    if result.best is None or result.interval is None or result.best.figure is None:
        print("best: none (no attempt has a priced figure)")
        return EXIT_OK
    low, high = result.interval
    print(
        f"best {result.best.run_id}  {cell} {fmt_return(result.best.figure.total_return)}  "
        f"{result.confidence:.2%} [{fmt_return(low)}, {fmt_return(high)}]  "
        f"best of {result.attempts}"
    )
    return EXIT_OK


def _priced_arguments(parser: argparse.ArgumentParser, *, bundle_help: str, json_help: str) -> None:
    """The release and reference-price options of rescore and attempts, and their --json."""
    parser.add_argument("--bundle", required=True, help=bundle_help)
    parser.add_argument("--prices", required=True, help="the reference price file (CSV)")
    parser.add_argument("--source", required=True, help="where the reference prices came from")
    parser.add_argument("--pulled-at", default="", help="when they were pulled")
    parser.add_argument("--json", action="store_true", help=json_help)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``rescore`` and ``attempts``."""
    resc = sub.add_parser(
        "rescore",
        help="platform figures: re-derive a run's trades and price them with reference prices",
        description="Check that the trajectory, config and release are the ones the receipt "
        "binds and that every pick was knowable, then re-derive each cell's trades and price "
        "them with the given reference price file: each cell's return with a 95%% interval "
        "(block bootstrap over entry sessions, fixed seed), the contamination deltas, and "
        "the board's memory verdict (score_from_memory: the mask held and the pit clock's "
        "main minus shifted interval lies above zero); for a window that crosses "
        "the config's declared training cutoff, the placebo split too (main minus shifted "
        "before and after the cutoff, with intervals). "
        "Exit 1 (and no figures) when the artifacts do not hold together.",
    )
    resc.add_argument("receipt")
    resc.add_argument("--trajectory", required=True)
    _priced_arguments(
        resc,
        bundle_help="the release folder the receipt binds",
        json_help="print the figures as JSON",
    )
    cost_arguments(resc)
    index_arguments(resc, symbol=True)
    resc.set_defaults(func=cmd_rescore)

    att = sub.add_parser(
        "attempts",
        help="a family's attempts priced alike: the best one and its family-wise interval",
        description="Price every receipt (each trajectory read from beside its receipt) with "
        "the reference prices, as rescore does, and print each attempt's shifted/pit figure "
        "with its 95%% interval, then the best attempt's interval at the Šidák level for all "
        "N attempts (0.95^(1/N)): what a board ranks it on. An attempt with no priced figure "
        "still counts. Exit 1 when any attempt's artifacts do not hold together.",
    )
    att.add_argument("receipts", nargs="+", metavar="RECEIPT")
    _priced_arguments(
        att,
        bundle_help="the release folder the receipts bind",
        json_help="print the result as JSON",
    )
    att.set_defaults(func=cmd_attempts)
