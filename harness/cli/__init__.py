"""pit-harness: build releases, run agents over arms x clocks, verify receipts offline.

One module per command group (``release``, ``prices``, ``run``, ``figures``, ``verify``,
``audit``, ``cost``, ``snapshot``, ``commitments``, ``certificate``, ``faultplan``, ``export``,
``interchange`` (``export-eee``), ``submit``; ``points`` is ``harness.points.cli``); this one builds the parser
from them and turns what a command raises into its exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harness.canonical import CanonicalError
from harness.cli import (
    audit,
    certificate,
    commitments,
    cost,
    export,
    faultplan,
    figures,
    gate,
    interchange,
    prices,
    release,
    run,
    snapshot,
    submit,
    verify,
)
from harness.cli.common import UsageError
from harness.market.prices import PriceError
from harness.outcomes import EXIT_INTERNAL, EXIT_USAGE
from harness.points import cli as points_cli
from harness.receipt.build import ReceiptError
from harness.release.store import ReleaseError
from harness.rundata.config import ConfigError
from harness.version import HARNESS_VERSION


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pit-harness",
        description="Point-in-time evaluation of agents on filings: releases with three arms, "
        "three clocks, nine cells, hash-bound receipts that anyone can verify offline.",
    )
    parser.add_argument("--version", action="version", version=f"pit-harness {HARNESS_VERSION}")
    sub = parser.add_subparsers(dest="command", required=True)
    release.add_parser(sub)
    prices.add_parser(sub)
    run.add_parsers(sub)
    figures.add_parsers(sub)
    verify.add_parser(sub)
    gate.add_parser(sub)
    audit.add_parser(sub)
    cost.add_parser(sub)
    snapshot.add_parser(sub)
    commitments.add_parser(sub)
    certificate.add_parser(sub)
    faultplan.add_parser(sub)
    export.add_parser(sub)
    interchange.add_parser(sub)
    submit.add_parser(sub)
    points_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except (UsageError, ConfigError, ReleaseError, PriceError, ReceiptError, CanonicalError) as exc:
        print(f"pit-harness: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, OSError) as exc:
        print(f"pit-harness: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a harness bug: said plainly, never scored, never a traceback
        print(
            f"pit-harness: internal error ({type(exc).__name__}: {exc}); this is a harness problem, "
            "not a result; please report it",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
