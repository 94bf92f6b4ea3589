"""``pit-harness fault-plan``: a fault plan checked and described before a sweep, with the
fixed declaration text the operator publishes to the entrant (seed 002)."""

from __future__ import annotations

import argparse
import json

from harness.cli.common import UsageError
from harness.outcomes import EXIT_OK
from harness.rundata.faultplan import DECLARATIONS, MODES, FaultPlanError, load_plan


def cmd_describe(args: argparse.Namespace) -> int:
    try:
        plan = load_plan(args.plan)
    except FaultPlanError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(
            json.dumps(
                {
                    "plan_sha256": plan.sha256,
                    "declared_relaxations": list(plan.declared_relaxations),
                    "entrant_declaration": plan.declaration(),
                    "plan": plan.record(),
                },
                indent=2,
            )
        )
        return EXIT_OK
    print(f"fault plan {plan.sha256}  seed {plan.seed}  {len(plan.faults)} fault(s)")
    for fault in plan.faults:
        parameter = MODES[fault.mode][0]
        group = "" if not isinstance(fault.group, str) else f"  group {fault.group}"
        print(
            f"  {fault.id}: {fault.mode} ({fault.relaxation}), {parameter} {fault.bound}, "
            f"in {fault.cohort_ppm / 10_000:g}% of cells{group}"
        )
    print()
    print("Publish to the entrant before the sweep:")
    print(plan.declaration())
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = sub.add_parser(
        "fault-plan",
        help="check a fault plan and print the declaration to publish to the entrant",
        description="Fault plans (sharpebench.fault-plan.v1) an external agent may be run "
        "under with run --fault-plan.",
    )
    commands = group.add_subparsers(dest="fault_plan_command", required=True)
    describe = commands.add_parser(
        "describe",
        help="check a plan (exit 2 naming the rule it breaks) and print its digest, its "
        "faults and the fixed declaration text of each relaxation it declares",
        description="Check a fault plan and print its digest, its faults and the declaration "
        "the operator publishes to the entrant before the sweep: one '- ' line per declared "
        f"relaxation ({', '.join(DECLARATIONS)}). Exit 0, or 2 if the plan is refused.",
    )
    describe.add_argument("plan", metavar="FILE", help="the fault plan (JSON)")
    describe.add_argument("--json", action="store_true", help="print JSON instead")
    describe.set_defaults(func=cmd_describe)
