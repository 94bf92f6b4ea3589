"""``pit-harness release``: a synthetic release, or one built from EDGAR's index files;
a new version of either, and a check of a chain of versions."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.common import UsageError, day
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from harness.progress import terminal_bar
from harness.release.edgar import build_release, read_tickers
from harness.release.keys import secret_file
from harness.release.store import ReleaseError


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


# what a folder given to --acceptance is read for (the fetcher's inbox keeps headers so)
ACCEPTANCE_SUFFIXES = (".hdr.sgml", ".txt", ".json")


def acceptance_files(given: list[str] | None) -> list[str]:
    """``--acceptance``'s files, a folder standing for every header, submission or
    submissions JSON directly in it (sorted by name: the same folder, the same release)."""
    files: list[str] = []
    for path in given or []:
        folder = Path(path)
        if folder.is_dir():
            found = sorted(
                str(p)
                for p in folder.iterdir()
                if p.is_file() and p.name.endswith(ACCEPTANCE_SUFFIXES)
            )
            if not found:
                raise UsageError(
                    f"--acceptance {path}: a folder with no {', '.join(ACCEPTANCE_SUFFIXES)} file"
                )
            files += found
        else:
            files.append(path)
    return files


def cmd_build(args: argparse.Namespace) -> int:
    tickers = read_tickers(args.tickers) if args.tickers else None
    secret_path = args.row_key_secret or str(Path(args.out).resolve()) + ".row-key-secret"
    existed = Path(secret_path).exists()
    with terminal_bar("release build", unit="rows") as on_progress:
        manifest = build_release(
            args.out,
            index_files=args.edgar_index,
            acceptance_files=acceptance_files(args.acceptance),
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


def _print_version(manifest: dict[str, object], out: str) -> None:
    added = manifest["added"]
    sessions = manifest["sessions_added"]
    assert isinstance(added, dict) and isinstance(sessions, list)
    print(
        f"release {manifest['name']}  added {added['rows']} rows on {len(sessions)} day(s)  "
        f"window ends {manifest['window']['end']}"  # type: ignore[index]
    )
    print(f"parent {manifest['parent']['content_digest']}")  # type: ignore[index]
    print(f"content_digest {manifest['content_digest']}")
    print(f"written to {out}")


def cmd_append(args: argparse.Namespace) -> int:
    from harness.release.append import append_edgar

    tickers = read_tickers(args.tickers) if args.tickers else None
    secret_path = args.row_key_secret or str(Path(args.to).resolve()) + ".row-key-secret"
    with terminal_bar("release append", unit="rows") as on_progress:
        manifest = append_edgar(
            args.to,
            args.out,
            index_files=args.edgar_index,
            acceptance_files=acceptance_files(args.acceptance),
            row_key_secret=secret_file(secret_path, args.out, create=False),
            tickers=tickers,
            name=args.name,
            end=args.end.isoformat() if args.end else None,
            leave_out_backdated=args.leave_out_backdated,
            on_progress=on_progress,
        )
    _print_version(manifest, args.out)
    return EXIT_OK


def cmd_synth_append(args: argparse.Namespace) -> int:
    from harness.release.append import append_synthetic

    with terminal_bar("release synth-append", unit="rows") as on_progress:
        manifest = append_synthetic(
            args.to,
            args.out,
            days=args.days,
            seed=args.seed,
            rows_per_day=args.rows_per_day,
            on_progress=on_progress,
        )
    _print_version(manifest, args.out)
    return EXIT_OK


def cmd_verify_chain(args: argparse.Namespace) -> int:
    from harness.release.chain import verify_chain

    for path in args.versions:
        if not Path(path).is_dir():
            raise ReleaseError(f"{path} is not a release folder")
    problems = verify_chain(args.versions)
    for problem in problems:
        print(f"BROKEN {problem}")
    if problems:
        return EXIT_MISMATCH
    print(f"chain of {len(args.versions)} version(s) holds")
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``release synth``, ``build``, ``append``, ``synth-append`` and ``verify-chain``."""
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
        "JSON (its Z-suffixed times are read as the file's own stamps show, see docs/release.md); "
        "a folder stands for every such file directly in it",
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

    append = rsub.add_parser(
        "append",
        help="a new version of a release: its rows unchanged, new days' filings added",
        description="A new version of the release --to: its files begin with the parent's "
        "bytes unchanged, the filings of the given EDGAR index files (read as `release build` "
        "reads them, all dated after the parent's window) are added on all three arms, and "
        "the manifest names the parent's content digest and the days added. The row keys use "
        "the parent's secret. Refused, writing nothing, when the parent fails its own check, "
        "a filing is dated inside its window or is already in it.",
    )
    append.add_argument("--to", required=True, metavar="RELEASE", help="the parent version")
    append.add_argument("--edgar-index", nargs="+", required=True, metavar="FILE")
    append.add_argument("--acceptance", nargs="+", metavar="FILE", help="as for release build")
    append.add_argument("--tickers", metavar="FILE", help="as for release build")
    append.add_argument(
        "--row-key-secret",
        metavar="FILE",
        help="the secret the release line was built with (default: <RELEASE>.row-key-secret)",
    )
    append.add_argument(
        "--leave-out-backdated",
        action="store_true",
        help="leave out (and count) listings dated inside the parent's window, which a daily "
        "index lists now and then, rather than refuse the files",
    )
    append.add_argument("--end", type=day, help="window end (default: the last added date)")
    append.add_argument("--name", help="release name (default: the parent's)")
    append.add_argument("--out", required=True, metavar="NEW")
    append.set_defaults(func=cmd_append)

    synth_append = rsub.add_parser(
        "synth-append",
        help="a new version of a synthetic release: its next business days, synthesised",
        description="A new version of a synthetic release (or of a version of one) adding "
        "the next --days EDGAR business days of synthetic filings by the line's own filers: "
        "same arguments, same bytes.",
    )
    synth_append.add_argument("--to", required=True, metavar="PARENT")
    synth_append.add_argument("--days", required=True, type=int, help="business days to add")
    synth_append.add_argument(
        "--seed", type=int, help="seed of the new days' draws (default: the line's)"
    )
    synth_append.add_argument(
        "--rows-per-day", type=int, help="filings a day (default: the parent's mean)"
    )
    synth_append.add_argument("--out", required=True, metavar="NEW")
    synth_append.set_defaults(func=cmd_synth_append)

    chain = rsub.add_parser(
        "verify-chain",
        help="check versions of a release, oldest first (exit 0 holds, 1 broken, 2 bad input)",
    )
    chain.add_argument("versions", nargs="+", metavar="VERSION")
    chain.set_defaults(func=cmd_verify_chain)
