"""``pit-harness release``: a synthetic release, or one built from EDGAR's index files."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.cli.common import UsageError, day
from harness.outcomes import EXIT_OK
from harness.release.edgar import build_release
from harness.release.keys import secret_file


def cmd_synth(args: argparse.Namespace) -> int:
    # the synthetic calendar's holidays come from pandas: loaded for this command only,
    # never for --help or the other commands
    from harness.release.synth import synth_release

    manifest = synth_release(
        args.out,
        start=args.start,
        end=args.end,
        seed=args.seed,
        rows=args.rows,
        acceptance_fraction=args.acceptance_fraction,
        name=args.name,
    )
    counts = manifest["row_counts"]
    print(
        f"release {manifest['name']}  rows {counts['total']}  acceptance_stamped {counts['acceptance_stamped']}"
    )
    print(f"content_digest {manifest['content_digest']}")
    print(f"written to {args.out}")
    return EXIT_OK


def cmd_build(args: argparse.Namespace) -> int:
    tickers = None
    if args.tickers:
        try:
            raw = json.loads(Path(args.tickers).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--tickers {args.tickers}: {exc}") from None
        if not isinstance(raw, dict):
            raise UsageError("--tickers must hold a JSON object {cik: ticker}")
        tickers = {str(k): str(v) for k, v in raw.items()}
    secret_path = args.row_key_secret or str(Path(args.out).resolve()) + ".row-key-secret"
    existed = Path(secret_path).exists()
    secret = secret_file(secret_path, args.out)
    manifest = build_release(
        args.out,
        index_files=args.edgar_index,
        acceptance_files=args.acceptance or [],
        name=args.name,
        tickers=tickers,
        row_key_secret=secret,
    )
    counts = manifest["row_counts"]
    print(
        f"release {manifest['name']}  rows {counts['total']}  acceptance_stamped {counts['acceptance_stamped']}"
    )
    print(f"content_digest {manifest['content_digest']}")
    print(
        f"row keys: keyed with the secret in {secret_path}"
        + ("" if existed else " (new, mode 0600)")
        + "; keep it to rebuild the same bytes, never publish it"
    )
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``release synth`` and ``release build``."""
    release = sub.add_parser("release", help="build a release (main, redacted and shifted arms)")
    rsub = release.add_subparsers(dest="release_command", required=True)
    synth = rsub.add_parser(
        "synth", help="a deterministic synthetic release (same seed, same bytes)"
    )
    synth.add_argument("--out", required=True, help="folder to write")
    synth.add_argument("--start", required=True, type=day, help="first filing date, YYYY-MM-DD")
    synth.add_argument("--end", required=True, type=day, help="last filing date, YYYY-MM-DD")
    synth.add_argument("--seed", required=True, type=int)
    synth.add_argument(
        "--rows", type=int, default=287_929, help="filings (default: 287929, the seed's size)"
    )
    synth.add_argument(
        "--acceptance-fraction",
        type=float,
        default=3124 / 287929,
        help="share of rows carrying acceptance_at (default: 3124/287929, as in the seed's release)",
    )
    synth.add_argument("--name", help="release name (default: derived from window and seed)")
    synth.set_defaults(func=cmd_synth)

    build = rsub.add_parser("build", help="a release from EDGAR master.idx index files")
    build.add_argument(
        "--edgar-index",
        nargs="+",
        required=True,
        metavar="FILE",
        help="full-index or daily-index master.idx files (.gz accepted)",
    )
    build.add_argument(
        "--acceptance",
        nargs="+",
        metavar="FILE",
        help="filing headers carrying ACCEPTANCE-DATETIME (US Eastern)",
    )
    build.add_argument("--tickers", metavar="FILE", help="JSON object {cik: ticker}")
    build.add_argument(
        "--row-key-secret",
        metavar="FILE",
        help="the secret row keys are keyed with (64 hex digits), created with mode 0600 when "
        "absent; outside the release folder (default: <out>.row-key-secret beside it)",
    )
    build.add_argument("--name", required=True)
    build.add_argument("--out", required=True)
    build.set_defaults(func=cmd_build)
