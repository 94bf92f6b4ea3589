"""``pit-harness export-eee``: a verified run as an Every Eval Ever record."""

from __future__ import annotations

import argparse

from harness.interchange.every_eval_ever import SCHEMA_VERSION, InterchangeError, write_record
from harness.interchange.options import now, source_arguments, source_of
from harness.interchange.run_record import run_record, verified_body
from harness.outcomes import EXIT_MISMATCH, EXIT_OK


def cmd_export_eee(args: argparse.Namespace) -> int:
    try:
        body = verified_body(
            args.receipt,
            trajectory=args.trajectory,
            bundle=args.bundle,
            prices=args.prices,
            index=args.index,
        )
        record = run_record(body, source=source_of(args), retrieved_at=now())
        write_record(args.out, record)
    except InterchangeError as exc:
        print(f"NOT exported: {exc}")
        return EXIT_MISMATCH
    print(
        f"run {body['run_id']} verified; {len(record['evaluation_results'])} result(s) -> "
        f"{args.out} (Every Eval Ever {SCHEMA_VERSION}, validated)"
    )
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``export-eee``."""
    text = (
        "verify a run (its hashes against the trajectory and the release, every score "
        "re-derived) and write it as an Every Eval Ever 0.3.0 record: per cell its total "
        "return and trades, per clock the contamination deltas, the mask probe's verdict; "
        "the record is validated against the vendored schema before it is written. Exit 1, "
        "nothing written, for a run that does not verify or is invalidated"
    )
    exp = sub.add_parser("export-eee", help=text, description=text)
    exp.add_argument("receipt")
    exp.add_argument("--trajectory", required=True, help="the trajectory the receipt binds")
    exp.add_argument("--bundle", required=True, help="the release folder the receipt binds")
    exp.add_argument(
        "--prices", help="the run's price file (a priced run's returns are re-derived with it)"
    )
    exp.add_argument(
        "--index",
        help="the run's market index file (a run with a benchmark_index: its excess return "
        "and beta are re-derived with it)",
    )
    exp.add_argument("--out", required=True, help="the record (JSON) to write")
    source_arguments(exp)
    exp.set_defaults(func=cmd_export_eee)
