"""``pit-harness release``: a synthetic release, or one built from EDGAR's index files."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.common import day
from harness.outcomes import EXIT_OK
from harness.progress import terminal_bar
from harness.release.edgar import build_release, read_tickers
from harness.release.keys import secret_file


def cmd_synth(args: argparse.Namespace) -> int:
    # the synthetic calendar's holidays come from pandas: loaded for this command only,
    # never for --help or the other commands
    from harness.release.synth import synth_release

    with terminal_bar("release synth", unit="rows") as on_progress:
        manifest = synth_release(
            args.out,
            start=args.start,
            end=args.end,
            seed=args.seed,
            rows=args.rows,
            acceptance_fraction=args.acceptance_fraction,
            name=args.name,
            on_progress=on_progress,
        )
    counts = manifest["row_counts"]
    print(
        f"release {manifest['name']}  rows {counts['total']}  acceptance_stamped {counts['acceptance_stamped']}"
    )
    print(f"content_digest {manifest['content_digest']}")
    print(f"written to {args.out}")
    return EXIT_OK


def cmd_build(args: argparse.Namespace) -> int:
    tickers = read_tickers(args.tickers) if args.tickers else None
    secret_path = args.row_key_secret or str(Path(args.out).resolve()) + ".row-key-secret"
    existed = Path(secret_path).exists()
    with terminal_bar("release build", unit="rows") as on_progress:
        manifest = build_release(
            args.out,
            index_files=args.edgar_index,
            acceptance_files=args.acceptance or [],
            name=args.name,
            tickers=tickers,
            # read (or made) only once every input file has been read
            row_key_secret=lambda: secret_file(secret_path, args.out),
            on_progress=on_progress,
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

    build = rsub.add_parser(
        "build",
        help="a release from EDGAR's index files (master, form or company .idx)",
        description="A release from the SEC's own files: EDGAR's index files, optionally "
        "acceptance times and tickers. docs/release.md says where the SEC publishes each "
        "file, its fair-access rules (a User-Agent naming you, at most 10 requests a "
        "second) and what prices to bring. A file that cannot be read is refused with its "
        "name and line, and nothing is written.",
    )
    build.add_argument(
        "--edgar-index",
        nargs="+",
        required=True,
        metavar="FILE",
        help="EDGAR index files: master.idx, form.idx or company.idx, daily or quarterly, "
        "plain or gzipped (each file's kind is read from the file, not its name)",
    )
    build.add_argument(
        "--acceptance",
        nargs="+",
        metavar="FILE",
        help="when EDGAR accepted the filings: filing headers carrying ACCEPTANCE-DATETIME "
        "(<accession>.hdr.sgml, a full submission <accession>.txt) or the SEC's submissions "
        "JSON (its Z-suffixed times are read as the file's own stamps show, see docs/release.md)",
    )
    build.add_argument(
        "--tickers",
        metavar="FILE",
        help="a JSON object {cik: ticker}, or the SEC's company_tickers.json",
    )
    build.add_argument(
        "--row-key-secret",
        metavar="FILE",
        help="the secret row keys are keyed with (64 hex digits), created with mode 0600 when "
        "absent; outside the release folder (default: <out>.row-key-secret beside it)",
    )
    build.add_argument("--name", required=True)
    build.add_argument("--out", required=True)
    build.set_defaults(func=cmd_build)
