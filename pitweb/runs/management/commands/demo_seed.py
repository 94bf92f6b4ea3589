"""Seed the site with demo data through the same paths real users take.

Builds a synthetic release and SYNTHETIC prices (labelled so), runs the harness with
the stub and two deterministic baselines, and one agent three times as another
submitter's family of attempts, uploads the runs through the upload service, waits for a real worker to verify them, seeds the judged points
(``demo_points``), and prints the staff's and the submitter's sign-in and a token.
"""

from __future__ import annotations

import secrets
import time
from datetime import date
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness import RunConfig, run
from harness.agents.base import load_agent
from harness.market.prices import synth_prices
from harness.release.bundle import Bundle
from harness.release.synth import synth_release
from pitweb.accounts.services import token_issue
from pitweb.board.models import Snapshot
from pitweb.board.services import snapshot_publish_each
from pitweb.pricing.models import PlatformScore
from pitweb.pricing.services import reference_prices_register
from pitweb.releases.services import release_register
from pitweb.runs import services
from pitweb.runs.models import FINAL_STATES, Run, VerificationJob

AGENTS = ("stub", "harness.agents.baselines:earliest_five", "harness.agents.baselines:date_reader")
STAFF = ("staff", "staff-demo-password")
# one family of attempts: the same agent uploaded by one submitter with three holds
TUNED = "stub"
TUNED_HOLDS = (3, 5, 8)


def _demo_password(path: Path) -> str:
    """The demo submitter's password: made once per machine, then read back."""
    if not path.exists() or not path.read_text().strip():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(12) + "\n")
        path.chmod(0o600)
    return path.read_text().strip()


class Command(BaseCommand):
    help = (
        "Seed demo data (synthetic release, SYNTHETIC prices, three baseline runs, SYNTHETIC "
        "reference prices), verify it and compute its platform figures."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rows", type=int, default=20_000)
        parser.add_argument(
            "--timeout", type=float, default=180.0, help="seconds to wait for verification"
        )
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000", help="where the site will be served"
        )
        parser.add_argument(
            "--demo-model",
            help="the demo model's base URL for the judged points (by default one is served "
            "while the command runs)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        work = Path(settings.VAR_DIR) / "demo"
        release_dir = work / "release"
        if not (release_dir / "manifest.json").exists():
            synth_release(
                release_dir,
                start=date(2023, 3, 1),
                end=date(2023, 3, 31),
                seed=7,
                rows=options["rows"],
                acceptance_fraction=0.05,
            )
        prices = work / "prices-SYNTHETIC.csv"
        if not prices.exists():
            tickers = sorted(
                {r["ticker"] for r in Bundle.load(release_dir).rows("main") if r["ticker"]}
            )
            synth_prices(
                prices, symbols=tickers, start=date(2023, 3, 1), end=date(2023, 5, 31), seed=7
            )
        release, _ = release_register(path=release_dir)
        reference_file = work / "reference-prices-SYNTHETIC.csv"
        if not reference_file.exists():  # the platform's own bars, apart from the submitter's
            tickers = sorted(
                {r["ticker"] for r in Bundle.load(release_dir).rows("main") if r["ticker"]}
            )
            synth_prices(
                reference_file,
                symbols=tickers,
                start=date(2023, 3, 1),
                end=date(2023, 5, 31),
                seed=11,
            )

        users = get_user_model()
        if not users.objects.filter(username=STAFF[0]).exists():
            users.objects.create_superuser(STAFF[0], password=STAFF[1])
        submitter = users.objects.filter(username="demo").first() or users.objects.create_user(
            "demo", email="demo@example.org"
        )
        # the submitter signs in at /accounts/login/ with a password of this machine's own,
        # kept beside the demo's secret key (the same one every time the demo starts)
        password = _demo_password(Path(settings.VAR_DIR) / "demo-submitter-password")
        submitter.set_password(password)
        submitter.save(update_fields=["password"])

        for name in AGENTS:
            self._submitted(
                name, work / "runs" / name.rsplit(":", 1)[-1], release_dir, prices, submitter,
                is_baseline=True,
            )  # fmt: skip
        # one submitter's agent tried with three holding periods: three benchmarks (the
        # hold is part of one), so three boards, each ranking its attempt
        tuner = users.objects.filter(username="tuner").first() or users.objects.create_user("tuner")
        for hold in TUNED_HOLDS:
            self._submitted(
                TUNED, work / "runs" / f"tuned-hold-{hold}", release_dir, prices, tuner,
                is_baseline=False, hold_sessions=hold,
            )  # fmt: skip

        deadline = time.monotonic() + options["timeout"]
        self._wait(deadline, lambda: VerificationJob.objects.exclude(state__in=FINAL_STATES))
        reference, created = reference_prices_register(
            release=release,
            path=reference_file,
            source="SYNTHETIC reference random walks (pit-harness prices synth, seed 11); "
            "no market data",
            pulled_at="generated",
            staff=users.objects.get(username=STAFF[0]),
            reason="demo: the release's reference prices",
        )
        verb = "registered" if created else "already registered:"
        self.stdout.write(f"{verb} reference prices v{reference.version} for {release.name}")
        self._wait(
            deadline,
            lambda: PlatformScore.objects.filter(
                state__in=(PlatformScore.State.PENDING, PlatformScore.State.SCORING)
            ),
        )
        for item in Run.objects.select_related("platform").order_by("submitted_at"):
            score = item.platform.state if item.platform else "no platform figure"
            self.stdout.write(f"  {item.run_id}  {item.agent:<40} {item.status}  {score}")
        self.stdout.write(f"release {release.name} {release.content_digest}")
        # executions: a registered agent run by the workers, an upload of it re-executed
        call_command(
            "demo_executions", release=str(release_dir), release_digest=release.content_digest,
            prices=str(prices), staff=STAFF[0],
            submitter="demo", timeout=max(deadline - time.monotonic(), 60.0), stdout=self.stdout,
        )  # fmt: skip
        # the judged points: a sealed set answered and judged by real workers, revealed
        call_command(
            "demo_points", demo_model=options["demo_model"], staff=STAFF[0],
            timeout=max(deadline - time.monotonic(), 30.0), stdout=self.stdout,
        )  # fmt: skip
        # a published snapshot of each benchmark's board: what "cite this board" names
        if not Snapshot.objects.exists():
            staff = users.objects.get(username=STAFF[0])
            for snapshot in snapshot_publish_each(reason="demo: the board as seeded", staff=staff):
                self.stdout.write(f"published snapshot {snapshot.pk} {snapshot.content_digest}")
        token = token_issue(user=submitter)
        self.stdout.write(f"submitter API token (user demo): {token}")
        sign_in = options["url"].rstrip("/") + "/accounts/login/"
        self.stdout.write(f"submitter sign-in: demo / {password}  ({sign_in})")
        self.stdout.write(f"staff sign-in: {STAFF[0]} / {STAFF[1]}  ({sign_in})")
        self.stdout.write(f"release folder: {release_dir.resolve()}")
        self.stdout.write("to submit a run of your own (README, Submitting a run), paste:")
        self.stdout.write(
            f"  export PITWEB_URL={options['url']} PITWEB_TOKEN={token} "
            f"PITWEB_RELEASE={release_dir.resolve()}"
        )

    def _submitted(
        self, name: str, out: Path, release_dir: Path, prices: Path, submitter: Any,
        *, is_baseline: bool, hold_sessions: int = 5,
    ) -> None:  # fmt: skip
        """Run agent ``name`` with the harness and upload it as ``submitter``."""
        spec = load_agent(name)
        result = run(
            spec,
            RunConfig(
                bundle_path=str(release_dir),
                forms=("8-K",),
                start="2023-03-01",
                end="2023-03-10",
                agent=name,
                hold_sessions=hold_sessions,
                model_version=(
                    f"tuned-hold-{hold_sessions}"
                    if not is_baseline
                    else ("" if name == "stub" else f"baseline-{spec.name}")
                ),
                training_cutoff="" if name == "stub" else "2022-12-31",
                prices={
                    "path": str(prices),
                    "source": "SYNTHETIC random walks (pit-harness prices synth); no market data",
                    "pulled_at": "generated",
                },  # type: ignore[arg-type]
                trajectory_path=str(out / "trajectory.jsonl"),
                receipt_path=str(out / "receipt.json"),
            ),
        )
        failed = [
            f"{c['arm']}/{c['clock']} {c['status']}"
            + (f" ({c['agent_fault']['kind']})" if c.get("agent_fault") else "")
            for c in result.body["cells"]
            if c["status"] != "complete" or c["agent_errors"]
        ]
        if failed:  # a demo whose baseline could not run shows nothing worth seeing
            what = "baseline" if is_baseline else "agent"
            raise CommandError(f"{what} {name} did not complete: {', '.join(failed)}")
        with (
            open(out / "receipt.json", "rb") as receipt,
            open(out / "trajectory.jsonl", "rb") as trajectory,
            open(prices, "rb") as price_file,
        ):
            submission = services.run_submit(
                user=submitter,
                receipt=receipt,
                trajectory=trajectory,
                prices=price_file,
                is_baseline=is_baseline,
            )
        verb = "submitted" if submission.created else "already there"
        self.stdout.write(f"{verb}: run {submission.run.run_id} ({spec.name}, by {submitter})")

    def _wait(self, deadline: float, unfinished: Any) -> None:
        while unfinished().exists():
            if time.monotonic() > deadline:
                raise CommandError(
                    "jobs did not finish in time: is a worker running? (make demo starts one)"
                )
            time.sleep(0.5)
