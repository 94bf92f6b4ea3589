"""The work behind the points tasks: answer a point set with a registered model, or judge
an answer set with the site's judge, through the engine (``harness.points.run``).

Paid calls are journalled as they finish (the engine's ``Journal``, its lines in the
database: ``pitweb.points.journal``), so a worker that dies mid-job is replaced, on this
machine or another, by one that asks only what was not yet answered; the service that
ends the job removes its lines in the same transaction. A failed positive control ends
the job naming the point, with nothing judged; our own failures are retried and then
``harness_error``; answers the judge could not judge after the engine's own attempts are
asked again on the job's next attempt, and shown as harness errors once the attempts are
used up.
"""

from __future__ import annotations

import logging
import os
from urllib.parse import urlsplit

from harness.points.answer import AgentConfig, Answerer
from harness.points.artifacts import canonical_sha256
from harness.points.journal import Journal
from harness.points.judge import ControlFailed, Judge, JudgeConfig
from harness.points.markdown import Point as EnginePoint
from harness.points.pace import Pace
from harness.points.replies import LOOPBACK_HOSTS, NO_KEY
from harness.points.run import answer_points, judge_answer_set
from pitweb.jobs import machine
from pitweb.jobs.machine import MAX_ATTEMPTS, Outcome
from pitweb.points import services
from pitweb.points.engine import engine_points
from pitweb.points.journal import RowStore
from pitweb.points.models import ModelEndpoint, PointsJob

log = logging.getLogger(__name__)


class MissingKey(RuntimeError):
    """The worker holds no key for a remote endpoint: ours to fix, never the model's."""


def _key(endpoint: ModelEndpoint) -> str:
    key = os.environ.get(endpoint.api_key_env, "") if endpoint.api_key_env else ""
    if key:
        return key
    if urlsplit(endpoint.base_url).hostname in LOOPBACK_HOSTS:
        return NO_KEY
    raise MissingKey(
        f"no API key for {endpoint.name}: set {endpoint.api_key_env or 'its api_key_env'} "
        "on the workers"
    )


def _pace(endpoint: ModelEndpoint) -> Pace | None:
    return Pace(endpoint.rate_per_minute) if endpoint.rate_per_minute else None


def _progress(job: PointsJob, journal: Journal, worker: str) -> machine.Heartbeat:
    """The job's heartbeat, which also writes how many paid calls the journal holds."""

    def written() -> None:
        PointsJob.objects.filter(pk=job.pk, worker=worker).update(done_calls=len(journal.done))

    return machine.Heartbeat(PointsJob, job.pk, worker, also=written)


def _answer(job: PointsJob, points: list[EnginePoint], worker: str) -> Outcome:
    endpoint = job.endpoint
    config = AgentConfig(
        base_url=endpoint.base_url, api_key=_key(endpoint), model=endpoint.model,
        effort=endpoint.effort or None, timeout=float(endpoint.timeout_seconds),
    )  # fmt: skip
    header = {"kind": "answer", "job": job.pk, "base_url": endpoint.base_url,
              "model": endpoint.model, "effort": endpoint.effort,
              "suite": job.point_set.suite_sha256, "samples": job.samples}  # fmt: skip
    journal = Journal(RowStore(job, worker), header, resume=True)
    try:
        with _progress(job, journal, worker):
            body = answer_points(
                Answerer(config, pace=_pace(endpoint)), points, samples=job.samples,
                workers=endpoint.concurrency, journal=journal,
            )  # fmt: skip
    finally:
        journal.close()
    if body.status != "complete" and job.attempts < MAX_ATTEMPTS:
        return _retry(job, worker, f"{body.summary.harness_error} answer(s) failed")
    services.answer_job_finish(
        job_id=job.pk, worker=worker, body=body, paid_calls=len(journal.done)
    )
    return Outcome(PointsJob.State.DONE)


def _judge(job: PointsJob, points: list[EnginePoint], worker: str) -> Outcome:
    endpoint, answers = job.endpoint, job.answer_set
    assert answers is not None  # a judge job is made with its answer set
    config = JudgeConfig(
        base_url=endpoint.base_url, api_key=_key(endpoint), model=endpoint.model,
        effort=endpoint.effort, timeout=float(endpoint.timeout_seconds),
    )  # fmt: skip
    header = {"kind": "judge", "job": job.pk, "base_url": endpoint.base_url,
              "model": endpoint.model, "effort": endpoint.effort,
              "answer_set_sha256": canonical_sha256(answers.body),
              "stability_k": job.stability_k, "stride": job.stride}  # fmt: skip
    journal = Journal(RowStore(job, worker), header, resume=True)
    try:
        with _progress(job, journal, worker):
            body = judge_answer_set(
                Judge(config, journal=journal, pace=_pace(endpoint)),
                answers.record, points,
                stability_k=job.stability_k, stride=job.stride, workers=endpoint.concurrency,
            )  # fmt: skip
    except ControlFailed as exc:
        services.points_job_finish(
            job_id=job.pk, worker=worker, state=PointsJob.State.CONTROL_FAILED,
            message=f"aborted, nothing judged: {exc}",
        )  # fmt: skip
        return Outcome(PointsJob.State.CONTROL_FAILED)
    finally:
        journal.close()
    unjudged = body.summary["harness_errors"]["judge"]
    if unjudged and job.attempts < MAX_ATTEMPTS:
        return _retry(job, worker, f"{unjudged} answer(s) got no usable verdict")
    services.judge_job_finish(job_id=job.pk, worker=worker, body=body, paid_calls=len(journal.done))
    return Outcome(PointsJob.State.DONE)


def _retry(job: PointsJob, worker: str, why: str) -> Outcome:
    """Failed calls are asked again on the next attempt (the journal keeps the rest)."""
    retry_in = machine.give_up_or_release(
        PointsJob, pk=job.pk, worker=worker, message=f"{why}: asked again on the next attempt"
    )
    return machine.retry_outcome(PointsJob, retry_in)


def run_points_job(*, job_id: int, worker: str) -> Outcome:
    """Claim the job and do it."""
    if not machine.claim(PointsJob, pk=job_id, worker=worker):
        return Outcome("not claimed")
    job = PointsJob.objects.select_related("point_set", "endpoint", "answer_set").get(pk=job_id)
    try:
        points = engine_points(job.point_set)
        if job.kind == PointsJob.Kind.ANSWER:
            return _answer(job, points, worker)
        return _judge(job, points, worker)
    except Exception as exc:  # our failure, never the model's or the submitter's
        log.exception("points job %s failed", job_id)
        message = f"worker error: {type(exc).__name__}: {exc}"[:2000]
        retry_in = machine.give_up_or_release(PointsJob, pk=job_id, worker=worker, message=message)
        return machine.retry_outcome(PointsJob, retry_in)
