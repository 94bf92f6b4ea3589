"""``pit-harness run`` and ``clocks-report``: an agent run over arms x clocks, its
trajectory and receipt written, and the exit code that says whose side failed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.agents.base import AgentSpec
from harness.agents.external import configured_agent
from harness.cli.common import (
    UsageError,
    external_agent_arguments,
    fmt_return,
    measured_lines,
    placebo_lines,
)
from harness.outcomes import EXIT_AGENT_FAILED, EXIT_INTERNAL, EXIT_MISMATCH, EXIT_OK
from harness.progress import terminal_bar
from harness.rundata.config import RunConfig, replace_config
from harness.rundata.faultplan import FaultPlanError, load_plan
from harness.runs.checkpoint import CheckpointRefused
from harness.runs.finish import RunResult
from harness.runs.reports import clock_report
from harness.runs.runner import run
from harness.vocabulary import CLOCKS


def _run_config(args: argparse.Namespace, **forced: Any) -> tuple[RunConfig, AgentSpec]:
    """The config file with the command line's overrides, and the agent it names."""
    config = RunConfig.from_file(args.config)
    changes: dict[str, Any] = {**forced, **_overrides(args, config)}
    if changes:
        config = replace_config(config, **changes)
    if not config.bundle_path:
        raise UsageError(f"{args.config}: bundle_path is required")
    try:
        spec = configured_agent(config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return config, spec


def _overrides(args: argparse.Namespace, config: RunConfig) -> dict[str, Any]:
    """What the command line changes of the config file (the fault plan read and checked)."""
    changes: dict[str, Any] = {}
    for key, flag in (("trajectory_path", "trajectory"), ("receipt_path", "receipt"),
                      ("agent", "agent"), ("agent_cmd", "agent_cmd"),
                      ("agent_http", "agent_http"), ("dialect", "dialect"),
                      ("agent_process", "agent_process")):  # fmt: skip
        if getattr(args, flag, None):
            changes[key] = getattr(args, flag)
    if getattr(args, "agent_dir", None):
        changes["agent_dirs"] = tuple(dict.fromkeys((*config.agent_dirs, *args.agent_dir)))
    if args.pass_env:
        changes["pass_env"] = tuple(dict.fromkeys((*config.pass_env, *args.pass_env)))
    if getattr(args, "fault_plan", None):
        try:
            changes["fault_plan"] = load_plan(args.fault_plan)
        except FaultPlanError as exc:
            raise UsageError(f"--fault-plan {exc}") from None
    return changes


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
    config, spec = _run_config(args)
    try:
        with terminal_bar("run: sessions walked", unit="sessions") as progress:
            result = run(spec, config, progress=progress, checkpoint=args.checkpoint)
    except CheckpointRefused as exc:  # another invocation's progress: nothing ran
        print(f"pit-harness: error: {exc}", file=sys.stderr)
        return EXIT_MISMATCH
    body = result.body
    print(f"run {body['run_id']}  valid={body['valid']}  receipt {result.receipt['body_sha256']}")
    print(
        f"trajectory {body['binding']['trajectory_sha256']}  events {body['trajectory']['events']}"
    )
    for cell in body["cells"]:
        print(
            f"  {cell['arm']:<9} {cell['clock']:<6} total_return {fmt_return(cell['total_return']):>8}"
            f"  trades {cell['trades']:>4}  reachable={cell['reachable']}"
            + ("" if cell["status"] == "complete" else f"  {cell['status']}")
            + (f" ({cell['agent_fault']['kind']})" if cell.get("agent_fault") else "")
        )
        for line in measured_lines(
            cell.get("market"),
            after_costs=cell.get("total_return_after_costs"),
            costed="total_return_after_costs" in cell,
        ):
            print(f"  {'':<16}{line}")
    probe = body["probe"]
    if probe.get("status") == "complete":
        print(
            f"  probe shifted   {probe['verdict']}  recovered {probe['recovered']}/{probe['total']}"
        )
    else:
        print(f"  probe shifted   {probe.get('status', 'not_run')}")
    if body.get("placebo"):  # a window that crosses the declared training cutoff
        print("\n".join(placebo_lines(body["placebo"])))
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
    config, spec = _run_config(args, arms=("main",), clocks=CLOCKS, probe=0)
    there = [p for p in (config.trajectory_path, config.receipt_path) if Path(p).exists()]
    if there and not args.force:
        # the config is often a run's own: its receipt must not be replaced unannounced
        raise UsageError(
            f"{' and '.join(there)} already exist: clocks-report would overwrite them; give "
            "it files of its own (--trajectory, --receipt) or pass --force"
        )
    with terminal_bar("clocks-report: sessions walked", unit="sessions") as progress:
        result = run(spec, config, progress=progress)
    report = clock_report(result)
    body = result.body
    print(
        f"clocks-report {body['run_id']}  agent {body['config']['agent']}  "
        f"{body['config']['start']}..{body['config']['end']}  forms "
        f"{','.join(body['config']['forms'])}  main arm  valid={body['valid']}"
    )
    for line in report:
        print(
            f"  {line.clock:<6} total_return {fmt_return(line.total_return):>8}"
            f"  trades {line.trades:>5}  priced {line.priced:>5}"
            f"  bought before EDGAR accepted {line.entered_before_acceptance:>4} of "
            f"{line.stamped} stamped" + ("" if line.reachable else "  (unreachable)")
        )
    if not any(line.priced for line in report):
        print("  no prices: returns are n/a (give the config prices to score them)")
    print(f"  receipt {config.receipt_path} (pit-harness verify checks it)")
    return _exit_code(result)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``run`` and ``clocks-report``."""
    runs = sub.add_parser(
        "run",
        help="run an agent over arms x clocks and write trajectory and receipt",
        description="Run an agent over arms x clocks and write trajectory and receipt. Exit "
        "codes: 0 the run completed; 1 a --checkpoint file made by another invocation (its "
        "contract differs: nothing ran, the file is left as it is); 2 a usage or input error; "
        "3 a harness problem (a cell the harness could not run after three attempts: the "
        "receipt is written and says the run is not rankable); 4 the agent failed in at least "
        "one cell (receipt written).",
    )
    runs.add_argument("--config", required=True, help="run.json (keys follow RunConfig)")
    runs.add_argument("--trajectory", help="trajectory path (overrides trajectory_path)")
    runs.add_argument("--receipt", help="receipt path (overrides receipt_path)")
    runs.add_argument("--agent", help="'stub' or 'package.module:attribute' (overrides agent)")
    external_agent_arguments(runs)
    runs.add_argument(
        "--agent-process",
        choices=["auto", "isolated", "in_process"],
        help="where the agent runs: its own sandboxed process (isolated; needs bubblewrap), "
        "this process behind the socket guard (in_process), or isolated where possible and "
        "in_process otherwise, said so in the receipt (auto, the default; overrides "
        "agent_process)",
    )
    runs.add_argument(
        "--pass-env",
        action="append",
        metavar="NAME",
        help="an environment variable (an API key) to hand to the agent's process in a run "
        "with model_endpoints; repeatable; its value is never written anywhere",
    )
    runs.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="keep the run's progress in FILE (each cell as it ends, each failed attempt, "
        "saved atomically), bound to this invocation: release, config, agent, harness "
        "version, retry policy, cells. If FILE exists, resume: its finished cells are "
        "written from it, the others run again from their first session with a fresh agent, "
        "and the probe runs again; an agent whose decisions repeat gets the receipt an "
        "uninterrupted run gets. A FILE of another invocation is refused (exit 1, nothing "
        "run, FILE untouched). FILE stays when the run completes: the same command again "
        "writes the same run",
    )
    runs.add_argument(
        "--fault-plan",
        metavar="FILE",
        help="run the external agent (--agent-cmd or --agent-http) under a seeded fault plan "
        "(sharpebench.fault-plan.v1): faults change what the agent is shown or which of its "
        "submissions is accepted, never the book; the plan must declare exactly the "
        "relaxations its faults use; any refusal exits 2 before anything starts; publish "
        "'pit-harness fault-plan describe FILE' to the entrant first (overrides fault_plan)",
    )
    runs.set_defaults(func=cmd_run)

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
    external_agent_arguments(report)
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
