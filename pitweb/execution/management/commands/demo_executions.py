"""Seed the executions half of the demo through the paths staff, owners and workers take.

Staff register the reference agent in our dialect (an installed package, examples/agents/
pit_stdio.py) for the demo submitter; the submitter uploads a run of it made with the
command line, and asks the workers for a run of it on the demo release; staff have the
uploaded run re-executed by the workers; then staff have it executed under a fault plan
(its run ranked apart, its graded responses on its page). The jobs are waited for: the
executed runs and the re-executed upload end at level ``reexecuted`` (or the page says why
not, such as a worker that cannot isolate the agent).
"""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness import RunConfig, run
from harness.agents.external import command_agent
from pitweb.execution import services
from pitweb.execution.models import ExecutionJob, RegisteredAgent
from pitweb.releases.models import Release
from pitweb.runs import services as runs
from pitweb.runs.models import FINAL_STATES, VerificationJob

PACKAGE = "pit-stdio-python"
NAME = "reference-pit"
WINDOW = (date(2023, 3, 1), date(2023, 3, 10))
# the demo's fault plan: every fault in every cell, each with its own arming step
FAULT_PLAN = {
    "schema_version": "sharpebench.fault-plan.v1",
    "seed": 2026,
    "declared_relaxations": [
        "read_your_writes", "position_sign_convention", "submission_acceptance"
    ],
    "faults": [
        {"id": "late-positions", "cohort_ppm": 1_000_000,
         "fault": {"mode": "projection_lag", "max_lag_steps": 2}},
        {"id": "flipped-signs", "cohort_ppm": 1_000_000,
         "fault": {"mode": "amount_sign", "max_span_steps": 2}},
        {"id": "busy", "cohort_ppm": 1_000_000,
         "fault": {"mode": "rate_limit", "max_rejected_presentations": 3}},
    ],
}  # fmt: skip


class Command(BaseCommand):
    help = "Seed demo executions: a registered agent executed and an upload re-executed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--release", required=True, help="the release folder")
        parser.add_argument("--release-digest", required=True, help="its content digest")
        parser.add_argument("--prices", required=True, help="the submitter's price file")
        parser.add_argument("--staff", required=True)
        parser.add_argument("--submitter", required=True)
        parser.add_argument("--timeout", type=float, default=300.0)

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        staff = users.objects.get(username=options["staff"])
        owner = users.objects.get(username=options["submitter"])
        release_dir = Path(options["release"])
        release = Release.objects.get(content_digest=options["release_digest"])
        agent = RegisteredAgent.objects.filter(name=NAME).first() or services.agent_register(
            by=staff, name=NAME, owner=owner, package=PACKAGE
        )
        upload = self._upload(agent, release_dir, Path(options["prices"]), owner)
        deadline = time.monotonic() + options["timeout"]
        self._wait(deadline, lambda: VerificationJob.objects.exclude(state__in=FINAL_STATES))
        upload.refresh_from_db()  # verified by the worker meanwhile
        jobs = list(ExecutionJob.objects.filter(agent=agent))
        if not any(j.kind == ExecutionJob.Kind.EXECUTE for j in jobs):
            jobs.append(services.execution_request(
                by=owner, agent=agent, release=release, start=WINDOW[0], end=WINDOW[1],
                forms=["8-K"],
            ))  # fmt: skip
        if not any(j.kind == ExecutionJob.Kind.REEXECUTE for j in jobs):
            jobs.append(services.reexecution_request(
                by=staff, run=upload, reason="demo: re-execute the uploaded reference run"
            ))  # fmt: skip
        self._wait(deadline, lambda: ExecutionJob.objects.exclude(state__in=ExecutionJob.FINAL))
        self._wait(deadline, lambda: VerificationJob.objects.exclude(state__in=FINAL_STATES))
        # staff run the same agent under a fault plan (one execution of an agent at a time:
        # after the first has ended); it is ranked apart, its evidence on its run page
        if not ExecutionJob.objects.filter(agent=agent, config__has_key="fault_plan").exists():
            services.execution_request(
                by=staff, agent=agent, release=release, start=WINDOW[0], end=WINDOW[1],
                forms=["8-K"], fault_plan=FAULT_PLAN,
            )  # fmt: skip
            self._wait(deadline, lambda: ExecutionJob.objects.exclude(state__in=ExecutionJob.FINAL))
            self._wait(deadline, lambda: VerificationJob.objects.exclude(state__in=FINAL_STATES))
        for job in ExecutionJob.objects.filter(agent=agent).order_by("pk"):
            said = f" ({job.message})" if job.message else ""
            self.stdout.write(f"  execution {job.pk} {job.kind:<9} {job.state}{said}")

    def _upload(self, agent: RegisteredAgent, release_dir: Path, prices: Path, owner: Any) -> Any:
        """The reference agent's run as a submitter makes it with the command line."""
        out = Path(settings.VAR_DIR) / "demo" / "runs" / NAME
        if not (out / "receipt.json").exists():
            run(
                command_agent(services.package_argv(PACKAGE), dialect=agent.dialect),
                RunConfig(
                    bundle_path=str(release_dir), forms=("8-K",),
                    start=WINDOW[0].isoformat(), end=WINDOW[1].isoformat(),
                    prices={"path": str(prices), "pulled_at": "generated",
                            "source": "SYNTHETIC random walks (pit-harness prices synth); no market data"},  # type: ignore[arg-type]
                    trajectory_path=str(out / "trajectory.jsonl"),
                    receipt_path=str(out / "receipt.json"),
                ),
            )  # fmt: skip
        with (
            open(out / "receipt.json", "rb") as receipt,
            open(out / "trajectory.jsonl", "rb") as trajectory,
            open(prices, "rb") as price_file,
        ):
            submission = runs.run_submit(
                user=owner, receipt=receipt, trajectory=trajectory, prices=price_file
            )
        self.stdout.write(f"uploaded run {submission.run.run_id} of agent {NAME}")
        return submission.run

    def _wait(self, deadline: float, unfinished: Any) -> None:
        while unfinished().exists():
            if time.monotonic() > deadline:
                raise CommandError("executions did not finish in time: is a worker running?")
            time.sleep(0.5)
