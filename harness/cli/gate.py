"""``pit-harness gate``: a run's receipt judged against a committed baseline's, rule by rule
(``harness.receipt.gate``), for CI.

Both receipts are checked first, as ``verify`` checks one: a receipt whose body does not
hash to its body_sha256 is refused (exit 2), never judged. With the run's trajectory and
release, their binding is checked as ``verify`` checks it and every score re-derived;
with its price file too, each contamination delta gets its 95% interval; and the
trajectory's reasoning is audited for the real dates and issuers the masks hide.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness import canonical
from harness.cli.common import UsageError
from harness.market.prices import PriceError, load_prices
from harness.outcomes import EXIT_MISMATCH, EXIT_OK, EXIT_VOID
from harness.receipt.build import ReceiptError
from harness.receipt.gate import GateResult, Intervals, gate
from harness.receipt.model import ReceiptBody
from harness.receipt.rederive import rederive
from harness.receipt.rescore import RescoreRefused, rescore
from harness.receipt.verify import sound_body, verify

EXIT_CODES = (
    "Exit codes: 0 every rule holds; 1 a rule failed (each failed rule is named); "
    "2 a usage or input error (a file that is not there or not a receipt, a receipt whose "
    "body does not hash to its body_sha256, a trajectory or release that is not the one the "
    "receipt binds); 3 a harness problem (not a result); 5 the comparison is void (another "
    "release, forms, window, arms, clocks or hold; with --max-return-drop another price "
    "file): nothing else was judged. (4 is `run`'s: the agent failed.)"
)


def _inputs_exist(args: argparse.Namespace) -> None:
    """A file named on the command line that is not there is a usage error (exit 2)."""
    named = {
        "receipt": args.receipt,
        "--baseline": args.baseline,
        "--trajectory": args.trajectory,
        "--bundle": args.bundle,
        "--prices": args.prices,
    }
    for option, path in named.items():
        if path is None:
            continue
        folder = option == "--bundle"
        if not (Path(path).is_dir() if folder else Path(path).is_file()):
            raise UsageError(f"{option} {path}: no such {'folder' if folder else 'file'}")
    if (args.trajectory is None) != (args.bundle is None):
        raise UsageError("--trajectory and --bundle go together (the run's files, both)")
    if args.trajectory is None and (args.prices is not None or args.max_audit_hits is not None):
        used = "--prices" if args.prices is not None else "--max-audit-hits"
        raise UsageError(f"{used} needs the run's --trajectory and --bundle")


def _sound_body(path: str, label: str) -> ReceiptBody:
    """The typed body of a receipt whose hashes hold; refused (exit 2) otherwise."""
    try:
        return sound_body(path)
    except ReceiptError as exc:
        raise UsageError(f"{label} refused: {exc}") from None


def _bound(args: argparse.Namespace) -> None:
    """The trajectory and release are the ones the receipt binds (``verify``'s checks)."""
    report = verify(args.receipt, trajectory=args.trajectory, bundle=args.bundle)
    if not report.ok:
        raise UsageError(
            "the run's files are not the ones its receipt binds: " + "; ".join(report.failures)
        )


def _intervals(args: argparse.Namespace, body: ReceiptBody) -> tuple[Intervals | None, str]:
    """Every score re-derived from the run's files (refused if one differs) and, with its
    price file, each contamination delta's 95% interval: (intervals, why there are none)."""
    if args.prices is None:
        checked = rederive(
            args.receipt, trajectory=args.trajectory, release=args.bundle, check_release=False
        )
        if checked.first_mismatch is not None:
            wrong = checked.first_mismatch
            raise UsageError(f"the receipt's scores do not re-derive: {wrong.name}: {wrong.detail}")
        return None, "--prices draws one"
    try:
        prices = load_prices(args.prices, source="as stated in the receipt", pulled_at="")
    except PriceError as exc:
        raise UsageError(f"--prices: {exc}") from None
    bound = body.config.prices
    given = prices.reference()["file_sha256"]
    if bound is None or bound.file_sha256 != given:
        raise UsageError(
            f"--prices {Path(args.prices).name} hashes to {given}; the receipt binds "
            + ("no price file" if bound is None else bound.file_sha256)
        )
    try:
        figures = rescore(
            args.receipt,
            trajectory=args.trajectory,
            release=args.bundle,
            prices=prices,
            check_release=False,
        )
    except RescoreRefused as exc:
        raise UsageError(f"the receipt's scores do not re-derive: {exc}") from None
    return figures.delta_intervals(), ""


def _audit(args: argparse.Namespace) -> dict[str, Any]:
    """The run's reasoning audit, over its release as the run loaded it."""
    from harness.receipt.audit import AuditError, reasoning_audit, run_bundle

    try:
        artifact = reasoning_audit(Path(args.trajectory), run_bundle(args.bundle, args.trajectory))
    except AuditError as exc:
        raise UsageError(f"the reasoning audit cannot be made: {exc}") from None
    return artifact


def cmd_gate(args: argparse.Namespace) -> int:
    _inputs_exist(args)
    run = _sound_body(args.receipt, "receipt")
    baseline = _sound_body(args.baseline, "--baseline")
    intervals: Intervals | None = None
    because = "--trajectory, --bundle and --prices draw one"
    audit = None
    if args.trajectory is not None:
        _bound(args)
        intervals, because = _intervals(args, run)
        audit = _audit(args)
    result = gate(
        run,
        baseline,
        max_contamination=args.max_contamination,
        require_mask_holds=args.require_mask_holds,
        max_return_drop=args.max_return_drop,
        intervals=intervals,
        no_interval_because=because or None,
        audit=audit,
        max_audit_hits=args.max_audit_hits or 0,
    )
    if args.json:
        print(canonical.dumps(result.to_json()))
    else:
        print("\n".join(report_lines(result)))
    if result.void:
        return EXIT_VOID
    return EXIT_OK if result.passed else EXIT_MISMATCH


def report_lines(result: GateResult) -> list[str]:
    """One line per rule (PASS, FAIL or VOID, its name, its message), then the verdict."""
    width = max(len(r.name) for r in result.rules)
    lines = [
        f"{'VOID' if result.void else 'PASS' if r.ok else 'FAIL'}  {r.name:<{width}}  {r.message}"
        for r in result.rules
    ]
    if result.void:
        lines.append(
            "gate VOID: the run and the baseline are not comparable; nothing else was judged"
        )
    elif result.passed:
        lines.append(f"gate PASSED: {len(result.rules)} rules hold")
    else:
        failed = sorted({r.name for r in result.failed}, key=[r.name for r in result.rules].index)
        lines.append(
            f"gate FAILED: {', '.join(failed)} ({len(result.failed)} of {len(result.rules)} "
            "rules failed)"
        )
    return lines


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number, 0 or more")
    return value


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a count (0, 1, 2 ...)")
    return int(text)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``gate``."""
    gat = sub.add_parser(
        "gate",
        help="judge a run's receipt against a baseline receipt, rule by rule, for CI: exit 1 "
        "naming each rule that failed, 5 when the two are not comparable",
        description="Judge RECEIPT against the BASELINE receipt (yours, committed, or one the "
        "site serves for a verified run). Rules: comparable (the same release, forms, window, "
        "arms, clocks and hold; otherwise the comparison is void and nothing else is judged); "
        "valid (both valid, neither aborted); contamination (with --max-contamination: main "
        "minus each control arm, per clock, at most the limit, with its 95% interval when "
        "--trajectory, --bundle and --prices let one be drawn); mask (with "
        "--require-mask-holds the probe must have run and held; otherwise only a mask that "
        "held in the baseline and leaks now fails); protocol_gaps (no gap open that the "
        "baseline closed); return_drop (with --max-return-drop); reasoning_audit (with "
        "--trajectory and --bundle: real dates and issuers in the agent's texts, at most "
        "--max-audit-hits). " + EXIT_CODES,
    )
    gat.add_argument("receipt", help="the run's receipt.json")
    gat.add_argument("--baseline", required=True, help="the baseline's receipt.json")
    gat.add_argument(
        "--max-contamination",
        type=_fraction,
        metavar="X",
        help="the largest contamination delta (main minus shifted or redacted) allowed at any "
        "clock, in return units (0.02: two points)",
    )
    gat.add_argument(
        "--require-mask-holds",
        action="store_true",
        help="fail unless the mask probe ran and its verdict is mask_holds",
    )
    gat.add_argument(
        "--max-return-drop",
        type=_fraction,
        metavar="Y",
        help="the largest fall of the main arm's total_return below the baseline's allowed at "
        "any clock, absolute, in return units (0.01: one point); the runs must then be priced "
        "with the same file",
    )
    gat.add_argument(
        "--trajectory",
        help="the run's trajectory: with --bundle, its binding is checked as verify checks it, "
        "its scores re-derived and its reasoning audited",
    )
    gat.add_argument("--bundle", help="the release folder the run's receipt binds")
    gat.add_argument(
        "--prices",
        help="the run's price file (the one its receipt binds): each contamination delta's 95%% "
        "interval is drawn from the re-derived trades (paired block bootstrap)",
    )
    gat.add_argument(
        "--max-audit-hits",
        type=_count,
        metavar="N",
        help="with --trajectory and --bundle: the reasoning audit's hits allowed (default 0)",
    )
    gat.add_argument(
        "--json",
        action="store_true",
        help="print the result as one canonical JSON object (rules, passed, void) and nothing else",
    )
    gat.set_defaults(func=cmd_gate)
