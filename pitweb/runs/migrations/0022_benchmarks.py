"""Benchmarks: each run's (release, forms, window, hold, clocks), recorded, and families
counted per benchmark. The stored runs are given theirs from their receipt's config; a
family whose runs span benchmarks is split, one family per benchmark, each counting the
runs it holds (the first keeps what else it had counted)."""

from collections import defaultdict
from datetime import date
from typing import Any

import django.db.models.deletion
from django.db import migrations, models

from harness.rundata.benchmark import Benchmark as BenchmarkOf
from harness.vocabulary import CLOCKS


def _benchmark(Benchmark: Any, cache: dict[str, Any], run: Any) -> Any:
    config = (run.body or {}).get("config") or {}
    of = BenchmarkOf.of(
        release_digest=run.release_digest,
        forms=config.get("forms") or [f for f in run.forms.split(",") if f],
        start=config.get("start") or run.window_start.isoformat(),
        end=config.get("end") or run.window_end.isoformat(),
        hold_sessions=config.get("hold_sessions", 5),
        clocks=config.get("clocks") or list(CLOCKS),
    )
    if of.key not in cache:
        cache[of.key], _ = Benchmark.objects.get_or_create(
            key=of.key,
            defaults={
                "name": of.name,
                "release_digest": of.release_digest,
                "forms": ",".join(of.forms),
                "window_start": date.fromisoformat(of.start),
                "window_end": date.fromisoformat(of.end),
                "hold_sessions": of.hold_sessions,
                "clocks": ",".join(of.clocks),
            },
        )
    return cache[of.key]


def backfill(apps: Any, schema_editor: Any) -> None:
    Run = apps.get_model("runs", "Run")
    Family = apps.get_model("runs", "Family")
    Benchmark = apps.get_model("runs", "Benchmark")
    cache: dict[str, Any] = {}
    by_family: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    runs = Run.objects.only(
        "pk", "body", "release_digest", "forms", "window_start", "window_end", "family_id"
    ).order_by("pk")
    for run in runs.iterator(chunk_size=500):
        benchmark = _benchmark(Benchmark, cache, run)
        Run.objects.filter(pk=run.pk).update(benchmark=benchmark)
        if run.family_id is not None:
            by_family[run.family_id][benchmark.pk].append(run.pk)
    for family_id, groups in by_family.items():
        family = Family.objects.get(pk=family_id)
        first, *others = sorted(groups, key=lambda b: min(groups[b]))
        moved = sum(len(groups[b]) for b in others)
        family.benchmark_id = first
        family.attempts = max(len(groups[first]), family.attempts - moved)
        family.save(update_fields=["benchmark", "attempts"])
        for other in others:
            split = Family.objects.create(
                submitter_id=family.submitter_id,
                agent=family.agent,
                release_digest=family.release_digest,
                window_start=family.window_start,
                window_end=family.window_end,
                benchmark_id=other,
                attempts=len(groups[other]),
            )
            Run.objects.filter(pk__in=groups[other]).update(family=split)


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0021_board_moves_out"),
    ]

    operations = [
        migrations.CreateModel(
            name="Benchmark",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.CharField(max_length=32, unique=True)),
                ("name", models.TextField()),
                ("release_digest", models.CharField(db_index=True, max_length=71)),
                ("forms", models.TextField()),
                ("window_start", models.DateField()),
                ("window_end", models.DateField()),
                ("hold_sessions", models.PositiveIntegerField()),
                ("clocks", models.TextField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["-window_end", "window_start", "key"],
            },
        ),
        migrations.RemoveConstraint(
            model_name="family",
            name="one_family_per_board",
        ),
        migrations.AddField(
            model_name="family",
            name="benchmark",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="families",
                to="runs.benchmark",
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="benchmark",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="runs",
                to="runs.benchmark",
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="family",
            constraint=models.UniqueConstraint(
                fields=("submitter", "agent", "benchmark"), name="one_family_per_benchmark"
            ),
        ),
    ]
