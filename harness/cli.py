"""pit-harness: build releases, run agents over arms x clocks, verify receipts offline."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.outcomes import (
    EXIT_AGENT_FAILED,
    EXIT_INTERNAL,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_USAGE,
)
from harness.version import HARNESS_VERSION
from harness.vocabulary import ARMS, CLOCKS

if TYPE_CHECKING:
    from harness.agents.base import AgentSpec
    from harness.rundata.config import RunConfig
    from harness.runs.runner import RunResult


class UsageError(Exception):
    pass


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def _fmt_return(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.2f}%"


def cmd_synth(args: argparse.Namespace) -> int:
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


def cmd_prices_synth(args: argparse.Namespace) -> int:
    from harness.market.prices import synth_prices
    from harness.release.bundle import Bundle

    bundle = Bundle.load(args.bundle)
    symbols = sorted({r["ticker"] for r in bundle.rows("main") if r.get("ticker")})
    end = args.end or date.fromisoformat(bundle.end)
    bars = synth_prices(
        args.out, symbols=symbols, start=date.fromisoformat(bundle.start), end=end, seed=args.seed
    )
    print(f"SYNTHETIC prices: {bars} bars for {len(symbols)} tickers written to {args.out}")
    return EXIT_OK


def cmd_build(args: argparse.Namespace) -> int:
    from harness.release.edgar import build_release
    from harness.release.keys import secret_file

    tickers = None
    if args.tickers:
        import json

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


def _run_config(args: argparse.Namespace, **forced: Any) -> tuple[RunConfig, AgentSpec]:
    """The config file with the command line's overrides, and the agent it names."""
    from harness.agents.external import configured_agent
    from harness.rundata.config import RunConfig, replace_config

    config = RunConfig.from_file(args.config)
    changes: dict[str, Any] = dict(forced)
    if args.trajectory:
        changes["trajectory_path"] = args.trajectory
    if args.receipt:
        changes["receipt_path"] = args.receipt
    if args.agent:
        changes["agent"] = args.agent
    for key in ("agent_cmd", "agent_http", "dialect"):
        if getattr(args, key, None):
            changes[key] = getattr(args, key)
    if getattr(args, "agent_dir", None):
        changes["agent_dirs"] = tuple(dict.fromkeys((*config.agent_dirs, *args.agent_dir)))
    if args.agent_process:
        changes["agent_process"] = args.agent_process
    if args.pass_env:
        changes["pass_env"] = tuple(dict.fromkeys((*config.pass_env, *args.pass_env)))
    if changes:
        config = replace_config(config, **changes)
    if not config.bundle_path:
        raise UsageError(f"{args.config}: bundle_path is required")
    try:
        spec = configured_agent(config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return config, spec


def _exit_code(result: RunResult) -> int:
    body = result.body
    if result.harness_failed or result.incomplete:
        print(
            "pit-harness: "
            + "; ".join(body["not_rankable_because"])
            + ". The receipt is written and says the run is not rankable.",
            file=sys.stderr,
        )
        # ours is exit 3; a cell whose agent process exited in every attempt is the
        # agent's side of the line, exit 4
        return EXIT_INTERNAL if result.harness_failed else EXIT_AGENT_FAILED
    if result.agent_failed:
        print(
            "pit-harness: the agent failed in at least one cell (see agent_fault and "
            "agent_errors in the receipt); the receipt is written",
            file=sys.stderr,
        )
        return EXIT_AGENT_FAILED
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from harness.runs.runner import run

    config, spec = _run_config(args)
    result = run(spec, config)
    body = result.body
    print(f"run {body['run_id']}  valid={body['valid']}  receipt {result.receipt['body_sha256']}")
    print(
        f"trajectory {body['binding']['trajectory_sha256']}  events {body['trajectory']['events']}"
    )
    for cell in body["cells"]:
        print(
            f"  {cell['arm']:<9} {cell['clock']:<6} total_return {_fmt_return(cell['total_return']):>8}"
            f"  trades {cell['trades']:>4}  reachable={cell['reachable']}"
            + ("" if cell["status"] == "complete" else f"  {cell['status']}")
            + (f" ({cell['agent_fault']['kind']})" if cell.get("agent_fault") else "")
        )
    probe = body["probe"]
    if probe.get("status") == "complete":
        print(
            f"  probe shifted   {probe['verdict']}  recovered {probe['recovered']}/{probe['total']}"
        )
    else:
        print(f"  probe shifted   {probe.get('status', 'not_run')}")
    if body["invalidated_by"]:
        print("  invalidated_by: " + "; ".join(body["invalidated_by"]))
    print("  protocol gaps: " + (", ".join(body["protocol_gaps"]) or "none"))
    print(f"  capabilities: {body['capability_line']}")
    print(f"  {body['network']['model_egress']['line']}")
    for entry in result.body["attempts"]:
        print(f"  retried {entry['cell']} (attempt {entry['attempt']}): {entry['failure']}")
    return _exit_code(result)


def cmd_clocks_report(args: argparse.Namespace) -> int:
    """The seed's clock experiment: one agent, one window, the main arm under each clock."""
    from harness.runs.reports import clock_report
    from harness.runs.runner import run

    config, spec = _run_config(args, arms=("main",), clocks=CLOCKS, probe=0)
    there = [p for p in (config.trajectory_path, config.receipt_path) if Path(p).exists()]
    if there and not args.force:
        # the config is often a run's own: its receipt must not be replaced unannounced
        raise UsageError(
            f"{' and '.join(there)} already exist: clocks-report would overwrite them; give "
            "it files of its own (--trajectory, --receipt) or pass --force"
        )
    result = run(spec, config)
    report = clock_report(result)
    body = result.body
    print(
        f"clocks-report {body['run_id']}  agent {body['config']['agent']}  "
        f"{body['config']['start']}..{body['config']['end']}  forms "
        f"{','.join(body['config']['forms'])}  main arm  valid={body['valid']}"
    )
    for line in report:
        print(
            f"  {line.clock:<6} total_return {_fmt_return(line.total_return):>8}"
            f"  trades {line.trades:>5}  priced {line.priced:>5}"
            f"  bought before EDGAR accepted {line.entered_before_acceptance:>4} of "
            f"{line.stamped} stamped" + ("" if line.reachable else "  (unreachable)")
        )
    if not any(line.priced for line in report):
        print("  no prices: returns are n/a (give the config prices to score them)")
    print(f"  receipt {config.receipt_path} (pit-harness verify checks it)")
    return _exit_code(result)


def cmd_rescore(args: argparse.Namespace) -> int:
    """Platform figures: the run's trades re-derived and priced with reference prices."""
    import json

    from harness.market.prices import load_prices
    from harness.receipt.rescore import RescoreRefused, rescore

    prices = load_prices(args.prices, source=args.source, pulled_at=args.pulled_at)
    try:
        result = rescore(
            args.receipt, trajectory=args.trajectory, release=args.bundle, prices=prices
        )
    except RescoreRefused as exc:
        for check in exc.failed:
            print(f"{check.name} MISMATCH  {check.detail}")
        print("pit-harness: no figures: the artifacts do not hold together", file=sys.stderr)
        return EXIT_MISMATCH
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
        return EXIT_OK
    ref = result.prices
    print(
        f"prices {ref['file']} {ref['file_sha256']}  source {ref['source']!r}  basis {ref['basis']}"
    )
    for (arm, clock), figure in result.cells.items():
        interval = (
            "n/a"
            if figure.low is None
            else f"[{_fmt_return(figure.low)}, {_fmt_return(figure.high)}]"
        )
        print(
            f"  {arm:<9} {clock:<6} total_return {_fmt_return(figure.total_return):>8}"
            f"  95% {interval:<20}  trades {figure.trades:>5}  priced {figure.priced:>5}"
        )
    for clock, deltas in result.deltas().items():
        print(
            f"  delta {clock:<6} main-shifted {_fmt_return(deltas['main_minus_shifted']):>8}"
            f"  main-redacted {_fmt_return(deltas['main_minus_redacted']):>8}"
        )
    return EXIT_OK


def cmd_attempts(args: argparse.Namespace) -> int:
    """A family's attempts priced alike, and the best one's family-wise interval."""
    import json

    from harness.market.prices import load_prices
    from harness.receipt.attempts import RANKED_CELL, attempts_of, family_best
    from harness.receipt.rescore import RescoreRefused

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
            else f"{_fmt_return(figure.total_return):>8}  95% "
            f"[{_fmt_return(figure.low)}, {_fmt_return(figure.high)}]"
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
        f"best {result.best.run_id}  {cell} {_fmt_return(result.best.figure.total_return)}  "
        f"{result.confidence:.2%} [{_fmt_return(low)}, {_fmt_return(high)}]  "
        f"best of {result.attempts}"
    )
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from harness.receipt.verify import verify

    report = verify(args.receipt, trajectory=args.trajectory, bundle=args.bundle)
    for line in report.lines:
        print(line)
    if not report.ok:
        return EXIT_MISMATCH
    if args.hashes_only:
        print("scores SKIPPED  (--hashes-only: the hashes hold; no score was re-derived)")
        return EXIT_OK
    if args.trajectory is None or args.bundle is None:
        if args.reexecute:
            raise UsageError("--reexecute needs --trajectory and --bundle")
        print("scores SKIPPED  (pass --trajectory and --bundle to re-derive every score)")
        return EXIT_OK
    code = _rederive_scores(args)
    if code != EXIT_OK or not args.reexecute:
        return code
    return _reexecute(args)


def cmd_snapshot_verify(args: argparse.Namespace) -> int:
    """A board snapshot's digest recomputed from its JSON export (``harness.snapshot``)."""
    from harness.snapshot import SnapshotError, verify_snapshot

    try:
        check = verify_snapshot(Path(args.file).read_text(encoding="utf-8"), args.digest)
    except SnapshotError as exc:
        raise UsageError(f"{args.file}: {exc}") from None
    print(f"snapshot digest {check.digest}")
    print(f"rows {check.rows}  removed after the snapshot {check.removed}")
    if check.ok is None:
        print("compare it with the digest the snapshot was published with (or pass --digest)")
        return EXIT_OK
    print("digest OK" if check.ok else f"digest MISMATCH  (published {args.digest})")
    return EXIT_OK if check.ok else EXIT_MISMATCH


def _reexecute(args: argparse.Namespace) -> int:
    """Every cell run again with a fresh agent; the first differing decision refused."""
    import json

    from harness.agents.base import load_agent
    from harness.agents.external import command_agent, http_agent
    from harness.receipt.verify import check_receipt
    from harness.runs.reexecute import FAILED, REPRODUCED, reexecute

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
    from harness.market.prices import PriceError, load_prices
    from harness.receipt.rederive import rederive

    prices = None
    if args.prices:
        try:  # the statement is the receipt's; only the file's bytes are compared
            prices = load_prices(args.prices, source="as stated in the receipt", pulled_at="")
        except PriceError as exc:
            print(f"scores MISMATCH  prices: {exc}")
            return EXIT_MISMATCH
    result = rederive(args.receipt, trajectory=args.trajectory, release=args.bundle, prices=prices)
    wrong = result.first_mismatch
    if wrong is not None:
        print(f"scores MISMATCH  {wrong.name}: {wrong.detail}")
        return EXIT_MISMATCH
    skipped = [c for c in result.checks if c.status == "skipped"]
    note = "".join(f"  ({c.name} skipped: {c.detail}; pass --prices)" for c in skipped)
    print(f"scores re-derived ok{note}")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from harness.release.bundle import Bundle
    from harness.runs.export import export_points

    bundle = Bundle.load(args.bundle, forms=args.forms, start=args.start, end=args.end)
    count = export_points(
        bundle, arm=args.arm, clock=args.clock, out=args.out, hold_sessions=args.hold_sessions
    )
    print(f"{count} decision points written to {args.out}")
    return EXIT_OK


def _external_agent_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent-cmd",
        metavar="CMD",
        help="an agent in another process, in any language: a command started afresh in "
        "each cell (in the cell's sandbox), spoken to with one JSON object per line on its "
        "stdin and stdout; every word naming a file is shown to it read-only at its own path "
        "(overrides agent_cmd; instead of --agent)",
    )
    parser.add_argument(
        "--agent-http",
        metavar="URL",
        help="an agent that is an HTTP service (it runs outside the harness's sandbox: "
        "agent_process=remote): sharpebench's dialect as POST URL/decide per decision, ours as "
        "POST URL/step per message (overrides agent_http; instead of --agent)",
    )
    parser.add_argument(
        "--dialect",
        choices=["pit", "sharpebench"],
        help="the wire protocol the external agent speaks: pit (tasks, tool calls, decisions; "
        "the default) or sharpebench (a MarketObservation per session, a Decision of orders) "
        "(overrides dialect)",
    )
    parser.add_argument(
        "--agent-dir",
        action="append",
        metavar="DIR",
        help="a folder shown read-only to the --agent-cmd agent too (its other files, a "
        "virtual environment); repeatable; hashed into the agent's digest",
    )


def _priced_arguments(parser: argparse.ArgumentParser, *, bundle_help: str, json_help: str) -> None:
    """The release and reference-price options of rescore and attempts, and their --json."""
    parser.add_argument("--bundle", required=True, help=bundle_help)
    parser.add_argument("--prices", required=True, help="the reference price file (CSV)")
    parser.add_argument("--source", required=True, help="where the reference prices came from")
    parser.add_argument("--pulled-at", default="", help="when they were pulled")
    parser.add_argument("--json", action="store_true", help=json_help)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pit-harness",
        description="Point-in-time evaluation of agents on filings: releases with three arms, "
        "three clocks, nine cells, hash-bound receipts that anyone can verify offline.",
    )
    parser.add_argument("--version", action="version", version=f"pit-harness {HARNESS_VERSION}")
    sub = parser.add_subparsers(dest="command", required=True)

    release = sub.add_parser("release", help="build a release (main, redacted and shifted arms)")
    rsub = release.add_subparsers(dest="release_command", required=True)
    synth = rsub.add_parser(
        "synth", help="a deterministic synthetic release (same seed, same bytes)"
    )
    synth.add_argument("--out", required=True, help="folder to write")
    synth.add_argument("--start", required=True, type=_day, help="first filing date, YYYY-MM-DD")
    synth.add_argument("--end", required=True, type=_day, help="last filing date, YYYY-MM-DD")
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

    prices = sub.add_parser("prices", help="price files (synthetic ones for demos)")
    psub = prices.add_subparsers(dest="prices_command", required=True)
    psynth = psub.add_parser(
        "synth",
        help="SYNTHETIC daily open/close random walks for every ticker of a release (demo only)",
    )
    psynth.add_argument("--bundle", required=True, help="release folder whose tickers to price")
    psynth.add_argument("--out", required=True, help="CSV to write (date,symbol,open,close)")
    psynth.add_argument("--seed", type=int, default=0)
    psynth.add_argument(
        "--end",
        type=_day,
        help="last session to price (default: release end; leave room for holds)",
    )
    psynth.set_defaults(func=cmd_prices_synth)

    run = sub.add_parser(
        "run",
        help="run an agent over arms x clocks and write trajectory and receipt",
        description="Run an agent over arms x clocks and write trajectory and receipt. Exit "
        "codes: 0 the run completed; 2 a usage or input error; 3 a harness problem (a cell "
        "the harness could not run after three attempts: the receipt is written and says the "
        "run is not rankable); 4 the agent failed in at least one cell (receipt written).",
    )
    run.add_argument("--config", required=True, help="run.json (keys follow RunConfig)")
    run.add_argument("--trajectory", help="trajectory path (overrides trajectory_path)")
    run.add_argument("--receipt", help="receipt path (overrides receipt_path)")
    run.add_argument("--agent", help="'stub' or 'package.module:attribute' (overrides agent)")
    _external_agent_arguments(run)
    run.add_argument(
        "--agent-process",
        choices=["auto", "isolated", "in_process"],
        help="where the agent runs: its own sandboxed process (isolated; needs bubblewrap), "
        "this process behind the socket guard (in_process), or isolated where possible and "
        "in_process otherwise, said so in the receipt (auto, the default; overrides "
        "agent_process)",
    )
    run.add_argument(
        "--pass-env",
        action="append",
        metavar="NAME",
        help="an environment variable (an API key) to hand to the agent's process in a run "
        "with model_endpoints; repeatable; its value is never written anywhere",
    )
    run.set_defaults(func=cmd_run)

    report = sub.add_parser(
        "clocks-report",
        help="the seed's clock experiment: main-arm return per clock and trades bought "
        "before EDGAR accepted the filing",
        description="Run one agent over one window on the main arm under each clock (leaky, "
        "dump, pit) and print each clock's return and how many trades were bought at an "
        "opening auction that had already begun when EDGAR accepted the filing, of the trades "
        "whose filing carries an acceptance stamp. Writes a trajectory and receipt like run "
        "(arms, clocks and probe are set for the experiment), and refuses (exit 2) to "
        "overwrite existing ones unless --force. Exit codes as for run.",
    )
    report.add_argument("--config", required=True, help="run.json (keys follow RunConfig)")
    report.add_argument("--trajectory", help="trajectory path (overrides trajectory_path)")
    report.add_argument("--receipt", help="receipt path (overrides receipt_path)")
    report.add_argument("--agent", help="'stub' or 'package.module:attribute' (overrides agent)")
    _external_agent_arguments(report)
    report.add_argument(
        "--agent-process",
        choices=["auto", "isolated", "in_process"],
        help="as for run (overrides agent_process)",
    )
    report.add_argument(
        "--force",
        action="store_true",
        help="overwrite a trajectory or receipt already at those paths (refused without it)",
    )
    report.add_argument(
        "--pass-env",
        action="append",
        metavar="NAME",
        help="an environment variable (an API key) to hand to the agent's process in a run "
        "with model_endpoints; repeatable; its value is never written anywhere",
    )
    report.set_defaults(func=cmd_clocks_report)

    resc = sub.add_parser(
        "rescore",
        help="platform figures: re-derive a run's trades and price them with reference prices",
        description="Check that the trajectory, config and release are the ones the receipt "
        "binds and that every pick was knowable, then re-derive each cell's trades and price "
        "them with the given reference price file: each cell's return with a 95%% interval "
        "(block bootstrap over entry sessions, fixed seed) and the contamination deltas. "
        "Exit 1 (and no figures) when the artifacts do not hold together.",
    )
    resc.add_argument("receipt")
    resc.add_argument("--trajectory", required=True)
    _priced_arguments(
        resc,
        bundle_help="the release folder the receipt binds",
        json_help="print the figures as JSON",
    )
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

    ver = sub.add_parser(
        "verify",
        help="recompute the receipt's hashes offline and, given the trajectory and the "
        "release, re-derive every score from them; exit 1 on any mismatch",
    )
    ver.add_argument("receipt")
    ver.add_argument("--trajectory", help="the trajectory the receipt binds")
    ver.add_argument("--bundle", help="the release folder the receipt binds")
    ver.add_argument(
        "--prices", help="the run's price file, to re-derive its returns too (priced runs)"
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
    _external_agent_arguments(ver)
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

    snap = sub.add_parser("snapshot", help="a board snapshot published by the site")
    snapsub = snap.add_subparsers(dest="snapshot_command", required=True)
    snapver = snapsub.add_parser(
        "verify",
        help="recompute a snapshot's digest offline from its JSON export (rows removed "
        "after publication count by the row digest they carry); exit 1 if it differs "
        "from --digest",
    )
    snapver.add_argument("file", help="the snapshot's JSON (/snapshots/<id>/?format=json)")
    snapver.add_argument("--digest", help="the content digest it was published with")
    snapver.set_defaults(func=cmd_snapshot_verify)

    exp = sub.add_parser(
        "export",
        help="decision points as JSONL for Inspect's json_dataset(), promptfoo's "
        "file://samples.jsonl and an lm-eval task (scalar metadata; target empty, "
        "metadata.scorer names the scorer: knowable_picks)",
    )
    exp.add_argument("--bundle", required=True)
    exp.add_argument("--arm", required=True, choices=ARMS)
    exp.add_argument("--clock", required=True, choices=CLOCKS)
    exp.add_argument("--out", required=True)
    exp.add_argument("--forms", nargs="+")
    exp.add_argument("--start")
    exp.add_argument("--end")
    exp.add_argument("--hold-sessions", type=int, default=5)
    exp.set_defaults(func=cmd_export)

    from harness.points import cli as points_cli

    points_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from harness.canonical import CanonicalError
    from harness.market.prices import PriceError
    from harness.receipt.build import ReceiptError
    from harness.release.store import ReleaseError
    from harness.rundata.config import ConfigError

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


if __name__ == "__main__":
    sys.exit(main())
