"""What the points commands share: reading the points folder, checking an argument, an
output that can be written, the journal, an endpoint's key and its arguments."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.points.journal import Journal, journal_path
from harness.points.markdown import Point, PointError, load_points
from harness.points.replies import LOOPBACK_HOSTS, NO_KEY


def points_of(args: argparse.Namespace) -> list[Point]:
    return load_points(args.points_dir)


def whole_number(least: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, not {value}")
        return value

    return parse


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def price(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a price") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"a price is a finite amount >= 0, not {text}")
    return value


def writable(path: str) -> None:
    """Refuse an output the command could not write, before any paid call is made."""
    folder = Path(path).resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise PointError(f"cannot write {path}: {folder} is not a writable folder")
    if Path(path).is_dir():
        raise PointError(f"cannot write {path}: it is a folder")


def journal_for(args: argparse.Namespace, header: dict[str, Any]) -> Journal:
    """The run's journal: paid calls saved as they finish, taken back with --resume."""
    journal = Journal(journal_path(args.out), header, resume=args.resume)
    if journal.done:
        print(f"resuming: {len(journal.done)} finished call(s) taken from {journal.store}")
    return journal


def credentials(args: argparse.Namespace) -> str:
    """The endpoint's key from the environment; on a loopback endpoint (the demo model, a
    model served on this machine) it may be unset."""
    key = os.environ.get(args.api_key_env, "")
    if key:
        return key
    if urlsplit(args.base_url).hostname in LOOPBACK_HOSTS:
        return NO_KEY
    raise PointError(f"set {args.api_key_env} to the endpoint's API key (--api-key-env)")


def endpoint_arguments(
    verb: argparse.ArgumentParser, model: str | None, effort: str | None
) -> None:
    verb.add_argument("--points-dir", default="points", help="the points folder")
    verb.add_argument("--base-url", required=True, help="an OpenAI-compatible API base URL")
    verb.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="the variable holding the key (may be unset for a loopback endpoint)",
    )
    if model is None:
        verb.add_argument("--model", required=True, help="the model under test")
    else:
        verb.add_argument("--model", default=model, help="the judge (the seed pins this one)")
    verb.add_argument("--effort", default=effort, help="sent as reasoning_effort")
    verb.add_argument("--timeout", type=positive_seconds, default=600.0, help="seconds per call")
    verb.add_argument("--workers", type=whole_number(1), default=4, help="calls in flight at once")
    verb.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run from its journal (.OUT.journal.jsonl beside --out)",
    )
