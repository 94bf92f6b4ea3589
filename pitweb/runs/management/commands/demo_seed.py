"""Seed the site with demo data through the same paths real users take.

Builds a synthetic release and SYNTHETIC prices (labelled so) of a market that moves on
news: a stock rises in the first session one of its 8-Ks is knowable and gives it back
over the next ten (``harness.market.prices.synth_prices``). Runs the harness with the
stub and two deterministic baselines, an honest agent that acts a session late three
times as another submitter's family of attempts (one per hold), and a deliberate cheat
that remembers which filings rose in the reference prices
(``harness.agents.memory_cheat``), so the board shows a score from memory caught and
ranks that tell agents apart. Uploads the runs through the upload service, waits for a
real worker to verify them, seeds the judged points (``demo_points``), and prints the
staff's and the submitter's sign-in and a token.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness import RunConfig, run
from harness.agents import demo_model, memory_cheat
from harness.agents.external import configured_agent
from harness.isolation.sandbox.outside import availability
from harness.market.prices import load_prices, news_sessions, synth_prices
from harness.release.bundle import Bundle
from harness.release.synth import synth_release
from pitweb.accounts.services import token_issue
from pitweb.board.models import Snapshot
from pitweb.board.services import snapshot_publish_each
from pitweb.pricing.models import PlatformScore
from pitweb.pricing.services import IndexGiven, rate_card_register, reference_prices_register
from pitweb.releases.services import release_register
from pitweb.runs import services
from pitweb.runs.models import FINAL_STATES, Run, VerificationJob

# the demo's SYNTHETIC rate card: the demo trading model's tokens at made-up prices
DEMO_RATE_CARD = {
    "schema_version": "pit-harness.rate-card.v1",
    "source": "SYNTHETIC: the demo's own prices, no provider's",
    "as_of": "2026-12-01",
    "models": {"demo-trader-not-a-model": {"input": 150, "output": 600}},
}
DEMO_KEY = "OPENAI_API_KEY"
AGENTS = ("stub", "harness.agents.baselines:earliest_five", "harness.agents.baselines:date_reader")
STAFF = ("staff", "staff-demo-password")
# one family of attempts: the same agent uploaded by one submitter with three holds; an
# honest agent, slow on purpose, so the main benchmark ranks it apart from the stub
TUNED = "harness.agents.late:one_session_late"
TUNED_HOLDS = (3, 5, 8)
# the runs' benchmark but for the hold (hold 5 is the main one)
FORMS = ("8-K",)
START, END = "2023-03-01", "2023-03-10"
MAIN_HOLD = 5
PRICES_SOURCE = (
    "SYNTHETIC random walks with 8-K news (pit-harness prices synth --seed 7 --news 8-K); "
    "no market data"
)
MARKET = "SYNTH-MKT"
MARKET_SOURCE = (
    "SYNTHETIC market index, a walk of its own (harness.market.prices.synth_prices with no "
    "stocks, seed 11, market SYNTH-MKT); no market data"
)
REFERENCE_SOURCE = (
    "SYNTHETIC reference random walks with 8-K news (pit-harness prices synth --seed 11 "
    "--news 8-K); no market data"
)
# the deliberate cheat: what it remembers is in this file, named on its command line
CHEAT_MEMORY = "demo-memory-CHEAT.json"
CHEAT_MODEL = "demo memory cheat: not a model, a deliberate cheat"


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
        # the platform's own bars, apart from the submitter's: the same news, other noise
        reference_file = work / "reference-prices-SYNTHETIC.csv"
        for path, seed in ((prices, 7), (reference_file, 11)):
            if not path.exists():
                rows = Bundle.load(release_dir).rows("main")
                synth_prices(
                    path, symbols=sorted({r["ticker"] for r in rows if r["ticker"]}),
                    start=date(2023, 3, 1), end=date(2023, 5, 31), seed=seed,
                    news=news_sessions(rows, form=FORMS[0]),
                )  # fmt: skip
        # the platform's SYNTHETIC market index, a walk of its own (the demo's stocks do
        # not move on it, so the board's betas sit near zero): each run is measured
        # against it
        index_file = work / "market-index-SYNTHETIC.csv"
        if not index_file.exists():
            synth_prices(
                index_file, symbols=[], start=date(2023, 3, 1), end=date(2023, 5, 31), seed=11,
                market=MARKET,
            )  # fmt: skip
        release, _ = release_register(path=release_dir)
        memory = work / CHEAT_MEMORY
        if not memory.exists():  # the cheat's memory: computed ahead, from the reference bars
            remembered = memory_cheat.remember(
                release_dir, load_prices(reference_file, source=REFERENCE_SOURCE, pulled_at="generated"),
                forms=FORMS, start=START, end=END, hold_sessions=MAIN_HOLD,
            )  # fmt: skip
            memory_cheat.write_memory(memory, remembered)

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
                work / "runs" / name.rsplit(":", 1)[-1], release_dir, prices, PRICES_SOURCE,
                submitter, agent=name, is_baseline=True,
                model_version="" if name == "stub" else f"baseline-{name}",
                training_cutoff="" if name == "stub" else "2022-12-31",
            )  # fmt: skip
        # one submitter's agent tried with three holding periods: three benchmarks (the
        # hold is part of one), so three boards, each ranking its attempt
        tuner = users.objects.filter(username="tuner").first() or users.objects.create_user("tuner")
        for hold in TUNED_HOLDS:
            self._submitted(
                work / "runs" / f"tuned-hold-{hold}", release_dir, prices, PRICES_SOURCE, tuner,
                agent=TUNED, is_baseline=False, hold_sessions=hold,
                model_version=f"tuned-hold-{hold}", training_cutoff="2022-12-31",
            )  # fmt: skip
        # the deliberate cheat, priced with the bars it remembers; its declared training
        # data covers the window (P2 says so), and the board flags its score as memory
        self._submitted(
            work / "runs" / "memory-cheat", release_dir, reference_file, REFERENCE_SOURCE,
            submitter, is_baseline=False, model_version=CHEAT_MODEL, training_cutoff="2023-12-31",
            agent_cmd=shlex.join(["python3", memory_cheat.__file__, str(memory.resolve())]),
        )  # fmt: skip

        # a model-calling agent through the run's recording proxy, against the demo's
        # trading model (not a model): its tokens measured, priced with the demo's card
        self._model_run(work, release_dir, prices, submitter)
        card = work / "rate-card-SYNTHETIC.json"
        card.write_text(json.dumps(DEMO_RATE_CARD, indent=2) + "\n")
        made, created = rate_card_register(
            path=card, staff=users.objects.get(username=STAFF[0]),
            reason="demo: a SYNTHETIC rate card for the demo's trading model",
        )  # fmt: skip
        self.stdout.write(
            f"{'registered' if created else 'already registered:'} rate card v{made.version}"
        )

        deadline = time.monotonic() + options["timeout"]
        self._wait(deadline, lambda: VerificationJob.objects.exclude(state__in=FINAL_STATES))
        reference, created = reference_prices_register(
            release=release,
            path=reference_file,
            source=REFERENCE_SOURCE,
            pulled_at="generated",
            staff=users.objects.get(username=STAFF[0]),
            reason="demo: the release's reference prices and its market index",
            index=IndexGiven(index_file, MARKET, MARKET_SOURCE, "generated"),
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
            self.stdout.write(f"  {item.run_id}  {item.agent:<52} {item.status}  {score}")
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

    def _model_run(self, work: Path, release_dir: Path, prices: Path, submitter: Any) -> None:
        """``examples/agents/model_agent.py`` in its sandbox, asking the demo's trading
        model (loopback HTTPS, reached only through the run's recording proxy), uploaded
        as ``submitter``; skipped, and said so, where the sandbox cannot run."""
        out = work / "runs" / "model-agent"
        if (out / "receipt.json").exists():  # seeded before: the same run, not a new one
            self._upload(out, prices, submitter, is_baseline=False, name="model_agent")
            return
        available, why = availability()
        if not available:
            self.stdout.write(f"skipped the model-calling agent's run: {why}")
            return
        agents = Path(settings.BASE_DIR) / "examples" / "agents"
        # the demo model takes any key: a made-up one, never a real key of this machine's
        kept = os.environ.get(DEMO_KEY)
        os.environ[DEMO_KEY] = "demo-key-not-a-secret"
        sys.path.insert(0, str(agents))  # the agent's module, named as run.json names it
        try:
            with demo_model.served() as model:
                self._submitted(
                    out, release_dir, prices, PRICES_SOURCE,
                    submitter, agent="model_agent:agent", is_baseline=False,
                    model_version=demo_model.DEMO_TRADER, training_cutoff="2022-12-31",
                    agent_process="isolated", model_endpoints=(model.endpoint,),
                    model_ca_file=str(model.ca_file), pass_env=(DEMO_KEY,),
                    agent_env={"OPENAI_BASE_URL": model.base_url, "PIT_MODEL": demo_model.DEMO_TRADER},
                    probe=2,
                )  # fmt: skip
        finally:
            sys.path.remove(str(agents))
            if kept is None:
                os.environ.pop(DEMO_KEY, None)
            else:
                os.environ[DEMO_KEY] = kept

    def _submitted(
        self, out: Path, release_dir: Path, prices: Path, source: str, submitter: Any, *,
        is_baseline: bool, agent: str = "stub", agent_cmd: str = "", hold_sessions: int = MAIN_HOLD,
        model_version: str = "", training_cutoff: str = "", **extra: Any,
    ) -> None:  # fmt: skip
        """Run an agent (``agent`` by name, or the command ``agent_cmd``) with the harness
        and upload it as ``submitter``."""
        config = RunConfig(
            bundle_path=str(release_dir),
            forms=FORMS,
            start=START,
            end=END,
            agent=agent,
            agent_cmd=agent_cmd,
            hold_sessions=hold_sessions,
            model_version=model_version,
            training_cutoff=training_cutoff,
            prices={"path": str(prices), "source": source, "pulled_at": "generated"},  # type: ignore[arg-type]
            trajectory_path=str(out / "trajectory.jsonl"),
            receipt_path=str(out / "receipt.json"),
            **extra,
        )
        spec = configured_agent(config)
        name = agent_cmd or agent
        result = run(spec, config)
        failed = [
            f"{c['arm']}/{c['clock']} {c['status']}"
            + (f" ({c['agent_fault']['kind']})" if c.get("agent_fault") else "")
            for c in result.body["cells"]
            if c["status"] != "complete" or c["agent_errors"]
        ]
        if failed:  # a demo whose baseline could not run shows nothing worth seeing
            what = "baseline" if is_baseline else "agent"
            raise CommandError(f"{what} {name} did not complete: {', '.join(failed)}")
        self._upload(out, prices, submitter, is_baseline=is_baseline, name=spec.name)

    def _upload(
        self, out: Path, prices: Path, submitter: Any, *, is_baseline: bool, name: str
    ) -> None:
        """A run's artifacts in ``out`` uploaded as ``submitter``."""
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
        self.stdout.write(f"{verb}: run {submission.run.run_id} ({name}, by {submitter})")

    def _wait(self, deadline: float, unfinished: Any) -> None:
        while unfinished().exists():
            if time.monotonic() > deadline:
                raise CommandError(
                    "jobs did not finish in time: is a worker running? (make demo starts one)"
                )
            time.sleep(0.5)
