"""Load PITFALL's points folder and one of its judged artifacts, as in a checkout of its
repository: ``manage.py import_pitfall --points src/pitfall/points --results FILE``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.points.baseline import ArtifactError
from harness.points.markdown import PointError
from pitweb.core.errors import SubmissionError
from pitweb.points.services import pitfall_import


class Command(BaseCommand):
    help = (
        "Import PITFALL's points (a public point set: development data, listed, never "
        "ranked) and a judged artifact of theirs, checked by the engine's importer."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--points", required=True, help="PITFALL's points folder")
        parser.add_argument("--results", required=True, help="a pitfall_point_baseline artifact")
        parser.add_argument("--name", default="pitfall-public", help="the point set's name")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            judged = pitfall_import(
                points_dir=Path(options["points"]),
                results=Path(options["results"]),
                name=options["name"],
            )
        except (PointError, ArtifactError) as exc:
            raise CommandError(f"refused: {exc}") from None
        except SubmissionError as exc:
            raise CommandError(f"refused: {exc.message}") from None
        summary = judged.summary
        point_set = judged.answer_set.point_set
        counts = " ".join(f"{k}={v}" for k, v in summary["class_counts"].items())
        self.stdout.write(
            f"point set {point_set.name}: {point_set.points.count()} points ({point_set.state}); "
            f"judged set {judged.pk} by {judged.judge_model}/{judged.judge_effort}: "
            f"PASS {summary['pass']} FAIL {summary['fail']} "
            f"HARNESS_ERROR {summary['harness_error']}; {counts}"
        )
