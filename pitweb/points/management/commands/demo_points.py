"""Seed the judged-points half of the demo through the paths staff and workers take.

The project's twelve synthetic finance points (``examples/finance-points``) are uploaded
as a sealed set (revealed today, once judged), answered by two demo readers of different
quality through real answer jobs, and each answer set judged by the demo judge through
real judge jobs. None of the three is a model (``harness.points.demo``): the pages say so,
and the demo judge's verdicts are never ranked.
"""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from harness.points.demo import DEMO_MODEL, READERS, served
from harness.points.gates import withheld_because
from harness.points.markdown import load_points
from pitweb.points import services
from pitweb.points.models import JudgedSet, PointSet, PointSetState, PointsJob

NAME = "finance-demo"


def _archive(folder: Path) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(folder, arcname="finance")
    buffer.seek(0)
    return buffer


@contextmanager
def demo_model_at(url: str | None, folder: Path) -> Iterator[str]:
    """The demo model at ``url``, or one served here for as long as the command runs."""
    if url:
        yield url
        return
    with served(load_points(folder)) as here:
        yield here


class Command(BaseCommand):
    help = (
        "Seed the demo's judged points: a sealed synthetic point set answered by two demo "
        "readers and judged by the demo judge through real workers, then revealed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--demo-model",
            help="the demo model's base URL (pit-harness points demo-model --points "
            "examples/finance-points); by default one is served while the command runs",
        )
        parser.add_argument("--staff", default="staff", help="the staff user who acts")
        parser.add_argument("--timeout", type=float, default=180.0)

    def handle(self, *args: Any, **options: Any) -> None:
        folder = Path(settings.BASE_DIR) / "examples" / "finance-points"
        staff = get_user_model().objects.get(username=options["staff"])
        deadline = time.monotonic() + options["timeout"]
        point_set = PointSet.objects.filter(name=NAME).first()
        if point_set is None:
            point_set = services.point_set_upload(
                user=staff, name=NAME, title="Synthetic finance arithmetic (the demo's own)",
                archive=_archive(folder), state=PointSetState.SEALED,
                reveal_on=timezone.localdate(),
                source="written by the pitweb project for its demo (examples/finance-points)",
            )  # fmt: skip
            self.stdout.write(f"point set {NAME}: sealed, commitment {point_set.commitment}")
        with demo_model_at(options["demo_model"], folder) as url:
            judge = services.model_register(
                user=staff, name="demo-judge", base_url=url, model=DEMO_MODEL, concurrency=2
            )
            for reader in READERS:
                endpoint = services.model_register(
                    user=staff, name=reader.removesuffix("-not-a-model"), base_url=url,
                    model=reader, concurrency=2,
                )  # fmt: skip
                self._answered_and_judged(point_set, endpoint, judge, staff, deadline)
        if point_set.state == PointSetState.SEALED:
            services.point_set_reveal(point_set=point_set, user=staff)
            self.stdout.write(f"point set {NAME}: revealed, salt {point_set.salt}")
        for judged in JudgedSet.objects.filter(answer_set__point_set=point_set):
            counts = judged.summary["class_counts"]
            because = withheld_because(judged.status, judged.broken_rules)
            self.stdout.write(
                f"  {judged.answer_set.model:<36} {judged.status:<16} "
                + (because or " ".join(f"{k}={v}" for k, v in counts.items() if v))
            )

    def _answered_and_judged(
        self, point_set: PointSet, endpoint: Any, judge: Any, staff: Any, deadline: float
    ) -> None:
        answers = point_set.answer_sets.filter(model=endpoint.model).first()
        if answers is None:
            job = services.answer_job_request(user=staff, point_set=point_set, endpoint=endpoint)
            answers = self._done(job, deadline).answer_set
            assert answers is not None
        if not answers.judged.exists():
            job = services.judge_job_request(
                user=staff, answer_set=answers, endpoint=judge, stride=1
            )
            self._done(job, deadline)
        self.stdout.write(f"answered and judged: {endpoint.model}")

    def _done(self, job: PointsJob, deadline: float) -> PointsJob:
        while True:
            job.refresh_from_db()
            if job.state in PointsJob.FINAL:
                break
            if time.monotonic() > deadline:
                raise CommandError(
                    f"{job} did not finish in time: is a worker running? (make demo starts one)"
                )
            time.sleep(0.5)
        if job.state != PointsJob.State.DONE:
            raise CommandError(f"{job} ended {job.state}: {job.message}")
        return job
