"""A points job's journal kept in the database: the engine's ``Journal`` over
``JournalLine`` rows, so the workers need no shared folder. Each paid call's line is its
own committed insert, made before the call counts as done, and only while its worker still
holds the job (a worker the sweep replaced writes nothing more, so no line lands after the
job's output is stored); lines come back in the order they were written (the rows' ids)."""

from __future__ import annotations

import threading

from django.db import connection, transaction

from harness.points.journal import JournalError
from pitweb.points.models import JournalLine, PointsJob


class RowStore:
    """``harness.points.journal.JournalStore`` over a job's ``JournalLine`` rows."""

    def __init__(self, job: PointsJob, worker: str) -> None:
        self.job_id, self.worker = job.pk, worker
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
        try:
            with transaction.atomic():  # the job's row held while the line is written
                held = PointsJob.objects.select_for_update().filter(
                    pk=self.job_id, state=PointsJob.State.RUNNING, worker=self.worker
                )
                if not list(held.values_list("pk", flat=True)):
                    raise JournalError(
                        f"points job {self.job_id} is no longer held by {self.worker}: "
                        "its line is not kept"
                    )
                JournalLine.objects.create(job_id=self.job_id, line=line)
        finally:
            if threading.get_ident() != self._opened_in:
                # a call pool's thread: its connection would outlive the job otherwise
                connection.close()

    def remove(self) -> None:
        JournalLine.objects.filter(job_id=self.job_id).delete()

    def close(self) -> None:
        """Nothing is held open: every line is committed as it is written."""
