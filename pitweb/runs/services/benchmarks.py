"""A run's benchmark, recorded: the one row per (release, forms, window, hold, clocks)
that its runs and families point to (``harness.rundata.benchmark`` computes it)."""

from __future__ import annotations

from datetime import date

from django.db import IntegrityError, transaction

from harness.rundata.benchmark import Benchmark as BenchmarkOf
from pitweb.runs.models import Benchmark


def benchmark_record(*, of: BenchmarkOf) -> Benchmark:
    """The stored benchmark ``of`` names, created the first time a run of it arrives."""
    found = Benchmark.objects.filter(key=of.key).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return Benchmark.objects.create(
                key=of.key,
                name=of.name,
                release_digest=of.release_digest,
                forms=",".join(of.forms),
                window_start=date.fromisoformat(of.start),
                window_end=date.fromisoformat(of.end),
                hold_sessions=of.hold_sessions,
                clocks=",".join(of.clocks),
            )
    except IntegrityError:  # created meanwhile by another upload
        return Benchmark.objects.get(key=of.key)
