"""Seed the demo's formal cohorts through the paths staff and submitters take, after the
forward track (``demo_forward``): the commitment log's clock never goes backwards, and the
forward track's commitments are stamped at a stated time in 2024.

1. **A live-shadow cohort** on the forward line's SYNTHETIC reference prices, along the
   demo's stated timeline (March 2024, the forward track's story): sealed before its as-of
   date, answered by the demo submitter before it passes, resolved after its resolution
   date from the prices file, finalized, and judged by the demo judge.
2. **A sealed cohort**: the four ``markets`` points of ``examples/finance-points``, answered
   from its published Questions by the two demo readers and uploaded by the demo submitter
   while sealed (entries at the site's own time), revealed today and judged at the reveal;
   then one answer set uploaded after the reveal, listed apart on the points board.

None of the answering models or the judge is a model (``harness.points.demo``): the pages
say so, and the demo judge's verdicts are never ranked.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from harness.market.prices import load_prices
from harness.points.answer import AgentConfig, Answerer
from harness.points.demo import DEMO_MODEL, READERS
from harness.points.live import LivePoint
from harness.points.model import plain
from harness.points.questions import questions_points
from harness.points.replies import NO_KEY
from harness.points.run import answer_points
from pitweb.points import services
from pitweb.points.board import points_board_view
from pitweb.points.management.commands.demo_points import demo_model_at
from pitweb.points.models import AnswerSet, PointSet, PointSetState, PointsJob
from pitweb.points.selectors import questions_document

LIVE = "synthetic-march-2024"
SEALED = "markets-cohort"
SUITE = "markets"
# the live cohort's stated timeline (the forward track's story: its commitments are
# stamped 2024-02-29): sealed, answered, resolved
SEALED_AT = datetime(2024, 3, 1, 15, 0, tzinfo=UTC)
AS_OF = date(2024, 3, 4)
ANSWERED_AT = datetime(2024, 3, 4, 15, 0, tzinfo=UTC)
RESOLVES_ON = date(2024, 3, 15)
RESOLVED_AT = datetime(2024, 3, 18, 15, 0, tzinfo=UTC)


def prices_file() -> Path:
    return Path(settings.VAR_DIR) / "demo" / "forward" / "reference-prices-SYNTHETIC.csv"


class Command(BaseCommand):
    help = (
        "Seed the demo's formal cohorts (after demo_forward): a live-shadow cohort resolved "
        "and judged, and a sealed cohort answered before its reveal and judged after."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--demo-model", help="the demo model's base URL (else served here)")
        parser.add_argument("--staff", default="staff")
        parser.add_argument("--submitter", default="demo")
        parser.add_argument("--timeout", type=float, default=180.0)

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        self.staff = users.objects.get(username=options["staff"])
        self.submitter = users.objects.get(username=options["submitter"])
        self.deadline = time.monotonic() + options["timeout"]
        folder = Path(settings.BASE_DIR) / "examples" / "finance-points"
        with demo_model_at(options["demo_model"], folder) as url:
            self.url = url
            self.judge = services.model_register(
                user=self.staff, name="demo-judge", base_url=url, model=DEMO_MODEL,
                concurrency=2,
            )  # fmt: skip
            self._live()
            self._sealed(folder)
        for line in board_lines():
            self.stdout.write(line)

    # -- the live-shadow cohort ---------------------------------------------------------

    def _live_points(self) -> tuple[list[LivePoint], dict[str, str]]:
        """Two points on the SYNTHETIC reference prices, and their outcomes in the file."""
        path = prices_file()
        if not path.exists():
            raise CommandError(f"{path} is missing: run demo_forward first")
        prices = load_prices(path, source="SYNTHETIC", pulled_at="generated")
        symbols = sorted(
            s for s in prices.symbols() if prices.price(s, AS_OF) and prices.price(s, RESOLVES_ON)
        )[:2]
        if len(symbols) < 2:
            raise CommandError("the SYNTHETIC prices hold no two symbols on both dates")
        points, truths = [], {}
        for symbol in symbols:
            start, end = prices.price(symbol, AS_OF), prices.price(symbol, RESOLVES_ON)
            assert start is not None and end is not None
            point_id = f"{symbol.lower()}-higher-by-mid-march"
            points.append(
                LivePoint(
                    id=point_id,
                    question=(
                        f"As of {AS_OF}, will {symbol} close higher on {RESOLVES_ON} than on "
                        f"{AS_OF} in the demo's SYNTHETIC reference prices? Answer yes or "
                        "no, with both closes."
                    ),
                    as_of=AS_OF,
                    resolves_on=RESOLVES_ON,
                    resolution=f"{symbol}'s closes on {AS_OF} and {RESOLVES_ON} in the "
                    "forward line's SYNTHETIC reference prices (pit-harness prices synth "
                    "--seed 23).",
                )
            )
            truths[point_id] = (
                f"{'Yes' if end > start else 'No'}: {symbol} closed at {end:.2f} on "
                f"{RESOLVES_ON} against {start:.2f} on {AS_OF}."
            )
        return points, truths

    def _live(self) -> None:
        points, truths = self._live_points()
        cohort = PointSet.objects.filter(name=LIVE).first()
        if cohort is None:
            cohort = services.live_cohort_create(
                user=self.staff, name=LIVE, title="Live shadow: two SYNTHETIC closes, March 2024",
                points=points, at=SEALED_AT,
                source="written by the pitweb project for its demo, on the forward line's "
                "SYNTHETIC reference prices (the demo's stated March 2024 timeline)",
            )  # fmt: skip
            self.stdout.write(f"live-shadow cohort {LIVE}: sealed at {SEALED_AT:%Y-%m-%d} (stated)")
        if not cohort.answer_sets.exists():
            self._upload(cohort, "demo-reader-careful-not-a-model", at=ANSWERED_AT)
        for point in cohort.points.filter(resolved_at__isnull=True).order_by("position"):
            services.live_point_resolve(
                user=self.staff, point=point, ground_truth=truths[point.point_id],
                provenance="Read from the forward line's SYNTHETIC reference prices file.",
                at=RESOLVED_AT, judge=self.judge,
            )  # fmt: skip
        self._judged(cohort)

    # -- the sealed cohort ----------------------------------------------------------------

    def _archive(self, folder: Path) -> io.BytesIO:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "cohort"
            shutil.copytree(folder / SUITE, root / SUITE)
            shutil.copy(folder / "META.md", root / "META.md")
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
                archive.add(root, arcname="cohort")
        buffer.seek(0)
        return buffer

    def _sealed(self, folder: Path) -> None:
        cohort = PointSet.objects.filter(name=SEALED).first()
        if cohort is None:
            cohort = services.point_set_upload(
                user=self.staff, name=SEALED, title="Markets: the demo's sealed cohort",
                archive=self._archive(folder), state=PointSetState.SEALED,
                reveal_on=timezone.localdate(),
                source="the four markets points of examples/finance-points (written by the "
                "pitweb project for its demo)",
            )  # fmt: skip
            self.stdout.write(f"sealed cohort {SEALED}: commitment {cohort.commitment}")
        if cohort.state == PointSetState.SEALED:
            for reader in READERS:
                self._upload(cohort, reader)
            services.point_set_reveal(point_set=cohort, user=self.staff, judge=self.judge)
            self.stdout.write(f"sealed cohort {SEALED}: revealed, its answers sent to the judge")
        self._judged(cohort)
        late = cohort.answer_sets.filter(timing=AnswerSet.Timing.AFTER_REVEAL).first()
        if late is None:
            late = self._upload(cohort, "demo-reader-hasty-not-a-model", label="-after-the-reveal")
        if not late.jobs.exists():  # the site's judge in the demo is the demo judge
            services.judge_job_request(user=self.staff, answer_set=late, endpoint=self.judge)
        self._judged(cohort)

    # -- shared ---------------------------------------------------------------------------

    def _upload(
        self, cohort: PointSet, reader: str, at: datetime | None = None, label: str = ""
    ) -> AnswerSet:
        """``reader``'s answers to the cohort's published Questions, uploaded by the demo
        submitter as any submitter would (``label`` names the answering model apart)."""
        asked = questions_points(json.loads(json.dumps(questions_document(cohort))))
        answerer = Answerer(AgentConfig(base_url=self.url, api_key=NO_KEY, model=reader))
        body = plain(answer_points(answerer, asked))
        if label:
            body["experiment"]["agent"]["model"] = reader + label
        upload = io.BytesIO(json.dumps(body).encode())
        answer_set, _ = services.answer_set_upload(
            user=self.submitter, point_set=cohort, upload=upload, at=at
        )
        when = f"stated {at:%Y-%m-%d}" if at else answer_set.timing
        self.stdout.write(f"  {cohort.name}: answers of {answer_set.model} received ({when})")
        return answer_set

    def _judged(self, cohort: PointSet) -> None:
        while (
            PointsJob.objects.filter(point_set=cohort).exclude(state__in=PointsJob.FINAL).exists()
        ):
            if time.monotonic() > self.deadline:
                raise CommandError("the cohorts' judge jobs did not finish: is a worker running?")
            time.sleep(0.5)
        failed = PointsJob.objects.filter(point_set=cohort).exclude(state=PointsJob.State.DONE)
        job = failed.first()
        if job is not None:
            raise CommandError(f"{job} ended {job.state}: {job.message}")


def board_lines() -> list[str]:
    found = points_board_view()
    return [
        f"  board: {r['model']:<40} {r['family']:<20} rank {r['rank'] or '-'}"
        for r in found["rows"]
    ] + [f"  apart: {a['model']:<40} {a['point_set']:<22} {a['because']}" for a in found["apart"]]
