"""The options both export commands take: who is exporting, as they say it, and when."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from harness.interchange.every_eval_ever import RELATIONSHIPS, Source


def source_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--organization",
        help="Every Eval Ever's source_organization_name: who ran the evaluation and "
        "publishes the record (default 'unknown', and the record says it was not stated)",
    )
    parser.add_argument(
        "--relationship",
        choices=RELATIONSHIPS,
        help="Every Eval Ever's evaluator_relationship: how whoever ran it stands to the "
        "model's developer (default 'other', and the record says it was not stated)",
    )


def source_of(args: argparse.Namespace) -> Source:
    return Source(organization=args.organization, relationship=args.relationship)


def now() -> datetime:
    """The record's retrieved_timestamp: when it was made."""
    return datetime.now(UTC)
