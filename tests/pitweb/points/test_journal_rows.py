"""A points job's journal in the database: each paid call committed as it finishes (from
the call pool's threads too), taken back whole by whichever worker resumes the job, and
another run's journal refused rather than mixed in."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from harness.points.journal import Journal, JournalError
from pitweb.points import services
from pitweb.points.journal import RowStore
from pitweb.points.models import JournalLine, PointSet, PointsJob

pytestmark = pytest.mark.django_db(transaction=True)
HEADER = {"kind": "judge", "job": 0, "model": "judge-x", "answer_set_sha256": "sha256:ab"}


def _job(point_set: PointSet) -> PointsJob:
    endpoint = services.model_register(
        user=None, name="judge", base_url="http://127.0.0.1:9/v1", model="judge-x"
    )
    return PointsJob.objects.create(kind="judge", point_set=point_set, endpoint=endpoint)


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
    journal = Journal(RowStore(job), HEADER, resume=True)
    assert _committed(job) == 1  # the header
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda n: journal.put(f"call-{n}", {"verdict": n, "text": "é"}), range(12)))
    journal.close()
    assert _committed(job) == 1 + 12
    # a worker on another machine: nothing but the rows
    again = Journal(RowStore(PointsJob.objects.get(pk=job.pk)), HEADER, resume=True)
    assert again.done == {f"call-{n}": {"verdict": n, "text": "é"} for n in range(12)}
    again.put("call-12", {"verdict": 12, "text": ""})
    assert len(Journal(RowStore(job), HEADER, resume=True).done) == 13
    again.finish()
    assert _committed(job) == 0


def test_another_runs_journal_is_refused_and_left_as_it_was(point_set: PointSet) -> None:
    job = _job(point_set)
    journal = Journal(RowStore(job), HEADER, resume=True)
    journal.put("call-0", {"verdict": 0})
    with pytest.raises(JournalError, match="belongs to another run"):
        Journal(RowStore(job), {**HEADER, "model": "another"}, resume=True)
    with pytest.raises(JournalError, match="pass --resume"):
        Journal(RowStore(job), HEADER, resume=False)
    assert _committed(job) == 2
    assert Journal(RowStore(job), HEADER, resume=True).done == {"call-0": {"verdict": 0}}
