"""A points job's journal kept in the database: the engine's ``Journal`` over
``JournalLine`` rows, so the workers need no shared folder. Each paid call's line is its
own committed insert, made before the call counts as done; lines come back in the order
they were written (the rows' ids)."""

from __future__ import annotations

import threading

from django.db import connection

from pitweb.points.models import JournalLine, PointsJob


class RowStore:
    """``harness.points.journal.JournalStore`` over a job's ``JournalLine`` rows."""

    def __init__(self, job: PointsJob) -> None:
        self.job_id = job.pk
        self._opened_in = threading.get_ident()

    def __str__(self) -> str:
        return f"the journal of points job {self.job_id}"

    def lines(self) -> list[str] | None:
        kept = list(
            JournalLine.objects.filter(job_id=self.job_id).order_by("id")
            .values_list("line", flat=True)
        )  # fmt: skip
        return kept or None

    def start(self, line: str) -> None:
        self.append(line)

    def append(self, line: str) -> None:
        JournalLine.objects.create(job_id=self.job_id, line=line)
        if threading.get_ident() != self._opened_in:
            # a call pool's thread: its connection would outlive the job otherwise
            connection.close()

    def remove(self) -> None:
        JournalLine.objects.filter(job_id=self.job_id).delete()

    def close(self) -> None:
        """Nothing is held open: every line is committed as it is written."""
