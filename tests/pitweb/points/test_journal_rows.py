"""A points job's journal in the database: each paid call committed as it finishes (from
the call pool's threads too), taken back whole by whichever worker resumes the job, and
another run's journal refused rather than mixed in."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from harness.points.journal import Journal, JournalError
from pitweb.jobs import machine
from pitweb.points import services
from pitweb.points.journal import RowStore
from pitweb.points.models import JournalLine, PointSet, PointsJob

pytestmark = pytest.mark.django_db(transaction=True)
HEADER = {"kind": "judge", "job": 0, "model": "judge-x", "answer_set_sha256": "sha256:ab"}


def _job(point_set: PointSet) -> PointsJob:
    """A judge job, held by worker "a"."""
    endpoint = services.model_register(
        user=None, name="judge", base_url="http://127.0.0.1:9/v1", model="judge-x"
    )
    job = PointsJob.objects.create(kind="judge", point_set=point_set, endpoint=endpoint)
    assert machine.claim(PointsJob, pk=job.pk, worker="a")
    return job


def _committed(job: PointsJob) -> int:
    """Lines another connection sees: only what was committed."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*) FROM {JournalLine._meta.db_table} WHERE job_id = %s", [job.pk]
        )
        return int(cursor.fetchone()[0])


def test_paid_calls_from_a_pool_are_committed_and_a_resumed_journal_takes_them_all(
    point_set: PointSet,
) -> None:
    job = _job(point_set)
    journal = Journal(RowStore(job, "a"), HEADER, resume=True)
    assert _committed(job) == 1  # the header
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda n: journal.put(f"call-{n}", {"verdict": n, "text": "é"}), range(12)))
    journal.close()
    assert _committed(job) == 1 + 12
    # a worker on another machine: nothing but the rows
    again = Journal(RowStore(PointsJob.objects.get(pk=job.pk), "a"), HEADER, resume=True)
    assert again.done == {f"call-{n}": {"verdict": n, "text": "é"} for n in range(12)}
    again.put("call-12", {"verdict": 12, "text": ""})
    assert len(Journal(RowStore(job, "a"), HEADER, resume=True).done) == 13
    again.finish()
    assert _committed(job) == 0


def test_another_runs_journal_is_refused_and_left_as_it_was(point_set: PointSet) -> None:
    job = _job(point_set)
    journal = Journal(RowStore(job, "a"), HEADER, resume=True)
    journal.put("call-0", {"verdict": 0})
    with pytest.raises(JournalError, match="belongs to another run"):
        Journal(RowStore(job, "a"), {**HEADER, "model": "another"}, resume=True)
    with pytest.raises(JournalError, match="pass --resume"):
        Journal(RowStore(job, "a"), HEADER, resume=False)
    assert _committed(job) == 2
    assert Journal(RowStore(job, "a"), HEADER, resume=True).done == {"call-0": {"verdict": 0}}


def test_a_worker_that_no_longer_holds_the_job_writes_nothing(point_set: PointSet) -> None:
    """The sweep handed the job to worker b: a paid call a finishing late is refused, so
    no line lands in b's journal (or after b stored the output and removed it)."""
    job = _job(point_set)
    stale = Journal(RowStore(job, "a"), HEADER, resume=True)
    stale.put("call-0", {"verdict": 0})
    assert machine.release(PointsJob, pk=job.pk, worker="a", message="requeued")
    assert machine.claim(PointsJob, pk=job.pk, worker="b")
    with pytest.raises(JournalError, match="no longer held by a"):
        stale.put("call-1", {"verdict": 1})
    taken = Journal(RowStore(job, "b"), HEADER, resume=True)
    assert taken.done == {"call-0": {"verdict": 0}}  # what a paid for, b does not pay again
    taken.put("call-1", {"verdict": 1})
    taken.finish()
    with pytest.raises(JournalError, match="no longer held by a"):
        stale.put("call-2", {"verdict": 2})
    assert _committed(job) == 0


def test_a_stale_workers_finish_leaves_the_holders_journal(point_set: PointSet) -> None:
    """Only the finish that ends the job removes its lines: worker a, replaced by b,
    finishing late changes nothing, and b's paid calls stay journalled."""
    job = _job(point_set)
    assert machine.release(PointsJob, pk=job.pk, worker="a", message="requeued")
    assert machine.claim(PointsJob, pk=job.pk, worker="b")
    Journal(RowStore(job, "b"), HEADER, resume=True).put("call-0", {"verdict": 0})
    assert not services.points_job_finish(job_id=job.pk, worker="a", state="done")
    assert _committed(job) == 2
    assert services.points_job_finish(job_id=job.pk, worker="b", state="done")
    assert _committed(job) == 0
