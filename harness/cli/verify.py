"""``pit-harness verify``: a receipt's hashes recomputed offline, every score re-derived
from the trajectory and the release, a forward binding checked (``harness.forward.check``),
and (``--reexecute``) every cell run again."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.agents.base import load_agent
from harness.agents.external import command_agent, http_agent
from harness.cli.common import UsageError, external_agent_arguments, placebo_lines
from harness.forward.check import verdict_line
from harness.forward.log import Entry, LogError, verify_log
from harness.market.index import bound_index
from harness.market.prices import PriceError, load_prices
from harness.outcomes import EXIT_INTERNAL, EXIT_MISMATCH, EXIT_OK
from harness.progress import terminal_bar
from harness.receipt.rederive import rederive
from harness.receipt.verify import Report, check_receipt, verify
from harness.runs.reexecute import FAILED, REPRODUCED, reexecute


def _inputs_exist(args: argparse.Namespace) -> None:
    """A file named on the command line that is not there is a usage error (exit 2), said
    before anything is checked: a mistyped path is not a mismatch."""
    named = {
        "receipt": args.receipt,
        "--trajectory": args.trajectory,
        "--bundle": args.bundle,
        "--prices": args.prices,
        "--index": args.index,
        "--log": args.log,
    }
    for option, path in named.items():
        if path is None:
            continue
        there = Path(path).is_dir() if option == "--bundle" else Path(path).is_file()
        if not there:
            kind = "folder" if option == "--bundle" else "file"
            raise UsageError(f"{option} {path}: no such {kind}")


def _log_entries(path: str | None) -> list[Entry] | None:
    """The commitment log's entries, its chain verified first (a broken log resolves no
    binding: exit 1, said as the log check says it)."""
    if path is None:
        return None
    try:
        document = json.loads(Path(path).read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"--log {path}: not a readable JSON file ({exc})") from None
    try:
        return verify_log(document)
    except LogError as exc:
        print(f"log BROKEN  {exc}")
        raise _LogBroken from None


class _LogBroken(Exception):
    """The commitment log given with --log does not verify."""


def cmd_verify(args: argparse.Namespace) -> int:
    _inputs_exist(args)
    try:
        log = _log_entries(args.log)
    except _LogBroken:
        return EXIT_MISMATCH
    report = verify(args.receipt, trajectory=args.trajectory, bundle=args.bundle, log=log)
    for line in report.lines:
        print(line)
    if not report.ok:
        return EXIT_MISMATCH
    if args.hashes_only:
        print("scores SKIPPED  (--hashes-only: the hashes hold; no score was re-derived)")
        return _forward(report, scored=False)
    if args.trajectory is None or args.bundle is None:
        if args.reexecute:
            raise UsageError("--reexecute needs --trajectory and --bundle")
        print("scores SKIPPED  (pass --trajectory and --bundle to re-derive every score)")
        if (report.body.get("config") or {}).get("forward") is not None:
            print("forward SKIPPED  (pass --trajectory and --bundle to check the commitment)")
        return EXIT_OK
    code = _rederive_scores(args)
    if code == EXIT_OK:
        code = _forward(report, scored=True)
    if code != EXIT_OK or not args.reexecute:
        return code
    return _reexecute(args)


def _forward(report: Report, *, scored: bool) -> int:
    """A run bound to a commitment: the binding's verdict, after the run's own checks.
    A failed one fails only the forward (or backtest) claim, and says so."""
    if report.forward is None:
        return EXIT_OK
    print(verdict_line(report.body, report.forward))
    if report.forward.status in ("forward", "backtest"):
        return EXIT_OK
    if report.forward.status == "unresolved":  # a claim not checked is not a claim held
        return EXIT_MISMATCH
    kind = "forward" if report.forward.status == "not_forward" else "backtest"
    print(
        f"  the {kind} claim fails, and only it: the run's hashes{' and scores' if scored else ''} "
        f"hold as printed above, so it may be a valid run (a backtest, say), but it is not a "
        f"{kind} run of the commitment it names"
    )
    return EXIT_MISMATCH


def _reexecute(args: argparse.Namespace) -> int:
    """Every cell run again with a fresh agent; the first differing decision refused."""
    named = [f for f in ("agent_cmd", "agent_http", "agent") if getattr(args, f)]
    if len(named) != 1:
        raise UsageError("--reexecute needs one agent: --agent-cmd, --agent-http or --agent")
    _, body = check_receipt(args.receipt)
    dialect = args.dialect or body["config"].get("agent_dialect", "pit")
    try:
        if args.agent_cmd:
            spec = command_agent(args.agent_cmd, dialect=dialect, agent_dirs=args.agent_dir or ())
        elif args.agent_http:
            spec = http_agent(args.agent_http, dialect=dialect)
        else:
            spec = load_agent(args.agent)
        result = reexecute(
            args.receipt,
            trajectory=args.trajectory,
            bundle=args.bundle,
            agent=spec,
            pass_env=args.pass_env or (),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
    elif result.result == REPRODUCED:
        print(f"reexecution ok  {result.steps_compared} decisions the same  agent {result.agent}")
    elif result.result == FAILED:
        print(f"reexecution_failed  {result.failure}")
    else:
        assert result.divergence is not None
        print(f"reexecution DIVERGED  ReexecutionDivergence: {result.divergence}")
    if not args.json:
        for note in result.notes:
            print(f"  note: {note}")
    if result.result == FAILED:
        return EXIT_INTERNAL
    return EXIT_OK if result.ok else EXIT_MISMATCH


def _rederive_scores(args: argparse.Namespace) -> int:
    """The site's own check, on the reader's machine: every claim the body makes that the
    trajectory, the release and the config determine, derived again and compared."""
    prices = None
    if args.prices:
        try:  # the statement is the receipt's; only the file's bytes are compared
            prices = load_prices(args.prices, source="as stated in the receipt", pulled_at="")
        except PriceError as exc:
            print(f"scores MISMATCH  prices: {exc}")
            return EXIT_MISMATCH
    index = None
    if args.index:
        try:  # the statement and symbol are the receipt's; the file's bytes are compared
            _, body = check_receipt(args.receipt)
            index = bound_index(args.index, (body.get("config") or {}).get("benchmark_index") or {})
        except PriceError as exc:
            print(f"scores MISMATCH  index: {exc}")
            return EXIT_MISMATCH
    with terminal_bar("verify: re-deriving the scores", unit="steps") as progress:
        result = rederive(
            args.receipt,
            trajectory=args.trajectory,
            release=args.bundle,
            prices=prices,
            progress=progress,
            index=index,
        )
    wrong = result.first_mismatch
    if wrong is not None:
        print(f"scores MISMATCH  {wrong.name}: {wrong.detail}")
        return EXIT_MISMATCH
    skipped = [c for c in result.checks if c.status == "skipped"]
    note = "".join(
        f"  ({c.name} skipped: {c.detail}; pass --{'index' if c.name == 'cell_market' else 'prices'})"
        for c in skipped
    )
    print(f"scores re-derived ok{note}")
    if any(c.name == "placebo" and c.status == "ok" for c in result.checks):
        _, body = check_receipt(args.receipt)  # the split as proven, printed as the run did
        print("\n".join(placebo_lines(body["placebo"])))
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``verify`` (with ``--reexecute``)."""
    ver = sub.add_parser(
        "verify",
        help="recompute the receipt's hashes offline and, given the trajectory and the "
        "release, re-derive every score from them and check a run bound to a commitment "
        "(the forward track: forward ok / forward no); exit 1 on any mismatch, or when "
        "the forward claim alone fails",
    )
    ver.add_argument("receipt")
    ver.add_argument("--trajectory", help="the trajectory the receipt binds")
    ver.add_argument("--bundle", help="the release folder the receipt binds")
    ver.add_argument(
        "--log",
        help="the commitment log (the site's /forward/log.json): a forward binding is looked "
        "up in it (without it a bound run is 'forward UNRESOLVED', exit 1)",
    )
    ver.add_argument(
        "--prices", help="the run's price file, to re-derive its returns too (priced runs)"
    )
    ver.add_argument(
        "--index",
        metavar="FILE",
        help="the run's market index file (runs with a benchmark_index), to re-derive each "
        "cell's excess return, beta and alpha too",
    )
    ver.add_argument(
        "--hashes-only",
        action="store_true",
        help="check the hashes alone, as before re-derivation was offered",
    )
    ver.add_argument(
        "--reexecute",
        action="store_true",
        help="after re-deriving the scores, run every cell again with a fresh agent (the one "
        "named by --agent-cmd, --agent-http or --agent; the dialect is the run's unless "
        "--dialect says otherwise) on the same frozen data and compare each decision's "
        "score-bearing part; the first difference is a ReexecutionDivergence (exit 1); a cell "
        "the harness cannot run again is reexecution_failed (exit 3)",
    )
    ver.add_argument("--agent", help="with --reexecute: a Python agent, 'package.module:attribute'")
    external_agent_arguments(ver)
    ver.add_argument(
        "--json", action="store_true", help="with --reexecute: print its report as JSON"
    )
    ver.add_argument(
        "--pass-env",
        action="append",
        metavar="NAME",
        help="with --reexecute of a run that called a model: an environment variable (an API "
        "key) to hand to the agent's process, as in the run; its model calls are answered from "
        "the recorded exchanges, never sent to the model",
    )
    ver.set_defaults(func=cmd_verify)
