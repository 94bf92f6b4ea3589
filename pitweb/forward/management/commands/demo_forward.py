"""Seed the forward track of the demo through the paths submitters, staff and workers take.

A synthetic release line (``pit-demo-forward``) is registered; the demo submitter commits
two registered agents to it at a stated time, after the line's last session: the
reference agent in our dialect and a deliberate memory cheat whose memory covers only the
sessions before the commitment (what it could have "known" then). The line then grows by
two versions of twenty sessions each (``release synth-append``: synthetic sessions, labelled
so), every version registered as staff register one; each registration queues, through
the scheduler and real workers, every live commitment's forward run over the sessions
after the commitment and its backtest over as many sessions before it. Both are waited
for, verified, checked and priced with the line's reference prices. Last, the cheat's
owner has it executed over a window that crosses its declared training cutoff: the
placebo split, whose contamination delta should be there before the cutoff and gone
after.

The commitments' stamps are STATED by this command (the demo's story needs sessions after
them), not read off the site's clock, and the command says so; a stamp still never goes
behind the log's last one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.agents import memory_cheat
from harness.market.prices import load_prices, news_sessions, synth_prices
from harness.release.append import append_synthetic
from harness.release.bundle import Bundle
from harness.release.synth import synth_release
from pitweb.execution import services as execution
from pitweb.execution.models import ExecutionJob, RegisteredAgent
from pitweb.forward.models import Commitment, ForwardRun
from pitweb.forward.services import commitment_create
from pitweb.pricing.models import PlatformScore
from pitweb.pricing.services import reference_prices_register
from pitweb.releases.services import release_register
from pitweb.runs.models import FINAL_STATES, VerificationJob

LINE = "pit-demo-forward"
SEED = 21
# enough filings, and sessions before the commitment, that forty forward sessions and
# their backtest hold the trades a ranking needs (the reference agent buys two a session)
ROWS = 7200
FIRST = (date(2023, 11, 1), date(2024, 2, 29))
# the stated commitment time: 16:30 New York, after the line's last session closed and
# before EDGAR's 17:30 cut-off (a filing dated the next day may be sent after it)
COMMITTED_AT = datetime(2024, 2, 29, 21, 30, tzinfo=UTC)
GROWTH = (20, 20)  # sessions each later version adds
FORMS = ["8-K"]
HOLD = 5
CLOCKS = ["pit"]
ARMS = ["main", "shifted"]
STUB = ("reference-pit", "pit-stdio-python")
CHEAT = ("memory-cheat-forward", "memory-cheat-demo")
CHEAT_MODEL = "demo memory cheat: not a model, a deliberate cheat"
# what the cheat "knows" ends here: its declared training cutoff, and its commitment's day
CUTOFF = "2024-02-29"
# the placebo run's first session: a window from here crosses the cutoff
PLACEBO_START = date(2024, 2, 1)
REFERENCE_SOURCE = (
    "SYNTHETIC reference random walks with 8-K news (pit-harness prices synth --seed 23 "
    "--news 8-K); no market data"
)


def memory_file() -> Path:
    """Where the cheat's memory lies: named on its package's command line, so its sha256
    is part of the committed digest."""
    return Path(settings.VAR_DIR) / "demo" / "forward" / "memory-CHEAT.json"


class Command(BaseCommand):
    help = "Seed the demo's forward track: two committed agents executed on appended days."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--staff", required=True)
        parser.add_argument("--submitter", required=True)
        parser.add_argument("--timeout", type=float, default=600.0)

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        staff = users.objects.get(username=options["staff"])
        owner = users.objects.get(username=options["submitter"])
        deadline = time.monotonic() + options["timeout"]
        work = Path(settings.VAR_DIR) / "demo" / "forward"
        versions = self._versions(work)
        prices = work / "reference-prices-SYNTHETIC.csv"
        if not prices.exists():
            rows = Bundle.load(versions[-1]).rows("main")
            synth_prices(
                prices, symbols=sorted({r["ticker"] for r in rows if r["ticker"]}),
                start=FIRST[0], end=date(2024, 5, 31), seed=23,
                news=news_sessions(rows, form=FORMS[0]),
            )  # fmt: skip
        memory = memory_file()
        if not memory.exists():  # what the cheat "knows": the sessions before it commits
            remembered = memory_cheat.remember(
                versions[0], load_prices(prices, source=REFERENCE_SOURCE, pulled_at="generated"),
                forms=tuple(FORMS), start=FIRST[0].isoformat(), end=FIRST[1].isoformat(),
                hold_sessions=HOLD,
            )  # fmt: skip
            memory_cheat.write_memory(memory, remembered)

        first, _ = release_register(path=versions[0])
        self._price(first, prices, staff)
        agents = [self._agent(name, package, staff, owner) for name, package in (STUB, CHEAT)]
        for agent in agents:
            if not Commitment.objects.filter(agent=agent).exists():
                commitment_create(
                    by=owner, agent=agent, release=first, forms=FORMS, hold_sessions=HOLD,
                    clocks=CLOCKS, arms=ARMS,
                    model_version=CHEAT_MODEL if agent.name == CHEAT[0] else "",
                    training_cutoff=CUTOFF if agent.name == CHEAT[0] else "",
                    at=COMMITTED_AT,
                )  # fmt: skip
        self.stdout.write(
            f"committed {', '.join(a.name for a in agents)} to {LINE} at the STATED time "
            f"{COMMITTED_AT:%Y-%m-%dT%H:%M:%SZ} (the demo's story, not the site's clock)"
        )
        for folder in versions[1:]:
            release, created = release_register(path=folder)
            self._price(release, prices, staff)
            verb = "registered" if created else "already registered:"
            self.stdout.write(f"{verb} {release.name} {release.content_digest}")
            # queued by a worker (the registration's signal), then run, verified, checked
            expected = 2 * Commitment.objects.filter(withdrawal__isnull=True).count()

            def unqueued(r: Any = release, n: int = expected) -> bool:
                return ForwardRun.objects.filter(release=r).count() < n

            self._wait(deadline, unqueued)
            self._wait(deadline, ExecutionJob.objects.exclude(state__in=ExecutionJob.FINAL).exists)
            self._wait(deadline, VerificationJob.objects.exclude(state__in=FINAL_STATES).exists)
            self._wait(deadline, ForwardRun.objects.filter(status=ForwardRun.Status.QUEUED).exists)
        cheat = next(a for a in agents if a.name == CHEAT[0])
        self._placebo(cheat, release, owner, deadline)
        pricing = (PlatformScore.State.PENDING, PlatformScore.State.SCORING)
        self._wait(deadline, PlatformScore.objects.filter(state__in=pricing).exists)
        for row in ForwardRun.objects.select_related("commitment__agent", "release", "run"):
            run_id = row.run.run_id if row.run else "-"
            self.stdout.write(
                f"  {row.commitment.agent.name:<22} {row.kind:<8} {row.start}..{row.end} "
                f"{row.status:<11} run {run_id}"
            )

    def _placebo(self, cheat: RegisteredAgent, release: Any, owner: Any, deadline: float) -> None:
        """The placebo split's story: the cheat, declaring the cutoff its memory ends at,
        run by its owner over a window that crosses it (a month before the commitment,
        the sessions after). Memory predicts a contamination delta before the cutoff and
        none after; the run page draws both."""
        start, end = PLACEBO_START.isoformat(), date.fromisoformat(str(release.window_end))
        if not ExecutionJob.objects.filter(agent=cheat, config__start=start).exists():
            execution.execution_request(
                by=owner, agent=cheat, release=release, start=PLACEBO_START,
                end=end, forms=FORMS, model_version=CHEAT_MODEL,
                training_cutoff=CUTOFF,
            )  # fmt: skip
            self.stdout.write(
                f"executing {cheat.name} from {start} to {end}, across its "
                f"declared cutoff {CUTOFF} (the placebo split)"
            )
        self._wait(deadline, ExecutionJob.objects.exclude(state__in=ExecutionJob.FINAL).exists)
        self._wait(deadline, VerificationJob.objects.exclude(state__in=FINAL_STATES).exists)

    def _versions(self, work: Path) -> list[Path]:
        """The line's first version and each later one, built once (same bytes each time)."""
        folders = [work / f"v{n}" for n in range(1, len(GROWTH) + 2)]
        if not (folders[0] / "manifest.json").exists():
            synth_release(folders[0], start=FIRST[0], end=FIRST[1], seed=SEED, rows=ROWS,
                          acceptance_fraction=0.3, name=LINE)  # fmt: skip
        for parent, child, days in zip(folders, folders[1:], GROWTH, strict=False):
            if not (child / "manifest.json").exists():
                append_synthetic(parent, child, days=days)
        return folders

    def _price(self, release: Any, prices: Path, staff: Any) -> None:
        reference_prices_register(
            release=release, path=prices, source=REFERENCE_SOURCE, pulled_at="generated",
            staff=staff, reason="demo: the forward line's reference prices",
        )  # fmt: skip

    def _agent(self, name: str, package: str, staff: Any, owner: Any) -> RegisteredAgent:
        found = RegisteredAgent.objects.filter(name=name).first()
        return found or execution.agent_register(by=staff, name=name, owner=owner, package=package)

    def _wait(self, deadline: float, unfinished: Callable[[], bool]) -> None:
        while unfinished():
            if time.monotonic() > deadline:
                raise CommandError("the forward track did not finish in time: is a worker running?")
            time.sleep(0.5)
