"""Reads of runs and their jobs. Each costs a fixed number of queries however many runs
there are. What they are called in words is ``presentation``; the board's reads are the
board app's."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, Q, QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import salted_hmac

from pitweb.core.models import AuditEvent
from pitweb.core.params import parse_run_key
from pitweb.jobs import machine
from pitweb.jobs.models import WorkerBeat
from pitweb.runs.models import (
    PROVEN_LEVELS,
    CutoffRelation,
    ReasoningAudit,
    Run,
    VerificationJob,
)


def visible_runs(user: User | AnonymousUser) -> QuerySet[Run]:
    """Public runs neither hidden nor withdrawn; plus a submitter's own; staff see
    everything."""
    runs = Run.objects.select_related("release", "submitter", "family")
    if user.is_authenticated and user.is_staff:
        return runs
    public = Q(visibility="public", hidden=False, withdrawn_at=None)
    if user.is_authenticated:
        return runs.filter(public | Q(submitter=user))
    return runs.filter(public)


def public_counts_by_release() -> dict[str, tuple[int, int]]:
    """Per release digest: the benchmarks holding a public run, and its public runs whose
    numbers the system proved. One query however many releases; a private, hidden or
    withdrawn run counts nowhere."""
    counted = (
        visible_runs(AnonymousUser())
        .order_by()
        .values("release_digest")
        .annotate(
            benchmarks=Count("benchmark", distinct=True),
            verified=Count("pk", filter=Q(verification_level__in=PROVEN_LEVELS)),
        )
    )
    return {c["release_digest"]: (c["benchmarks"], c["verified"]) for c in counted}


def holdout_models(release_pk: int) -> list[dict[str, Any]]:
    """The declared models a release is a holdout for: each (model_version,
    training_cutoff) of a public run on it whose numbers the system proved and whose
    window lies wholly after that cutoff (the receipt's P2 check), with how many such
    runs. A private, hidden, withdrawn or unproven run names none. One query."""
    found = (
        visible_runs(AnonymousUser())
        .filter(
            release_id=release_pk,
            verification_level__in=PROVEN_LEVELS,
            cutoff_relation=CutoffRelation.POST_CUTOFF,
        )
        .order_by()
        .values("model_version", "training_cutoff")
        .annotate(runs=Count("pk"))
    )
    models: list[dict[str, Any]] = [dict(m) for m in found]
    return sorted(models, key=lambda m: (m["training_cutoff"], m["model_version"]), reverse=True)


KEY = re.compile(r"[0-9a-f]{12,64}")


def matching(runs: QuerySet[Run], key: str) -> QuerySet[Run]:
    """The runs (among ``runs``: those the requester may see) a key names: a whole body
    hash, a run id (16 hex), or a body-hash prefix of 12 or more hex digits."""
    found_key = parse_run_key(key)
    if found_key is None:
        return runs.none()
    key = found_key
    if len(key) == 64:
        found = runs.filter(body_sha256=f"sha256:{key}")
    else:
        found = runs.filter(Q(body_sha256__startswith=f"sha256:{key}") | Q(run_id=key))
    return found.order_by("submitted_at", "pk")


def pick(runs: QuerySet[Run], key: str, wanted: int | None) -> tuple[Run | None, list[Run]]:
    """The run a key names, and the candidates when it names several bodies. The
    submission asked for by id (``?submission=``, parsed by the caller) wins; several
    submissions of one body give the earliest. Only runs the requester may see are ever
    considered, so nothing is revealed about the others."""
    found = matching(runs, key)
    if wanted is not None:
        found = found.filter(pk=wanted)
    candidates = list(found[:51])
    if len({r.body_sha256 for r in candidates}) == 1:
        return candidates[0], candidates
    return None, candidates


def submission(runs: QuerySet[Run], key: str, wanted: int | None) -> Run | None:
    """The one run a key names, or None (none visible, or several bodies)."""
    return pick(runs, key, wanted)[0]


def other_submissions(user: User | AnonymousUser, run: Run) -> list[Run]:
    """The other submissions of the same body that the requester may see."""
    return list(
        visible_runs(user)
        .filter(body_sha256=run.body_sha256)
        .exclude(pk=run.pk)
        .order_by("submitted_at", "pk")
    )


def worker_label(name: str, user: User | AnonymousUser) -> str:
    """A worker as the requester may see it: staff see its name (host and process id);
    anyone else a stable pseudonym, the same on every page, that tells workers apart
    and names no host."""
    if not name or (user.is_authenticated and user.is_staff):
        return name
    return "worker-" + salted_hmac("pitweb.runs.worker", name).hexdigest()[:10]


def _as_seen_by(jobs: list[VerificationJob], user: User | AnonymousUser) -> list[VerificationJob]:
    """The jobs for display: each worker by ``worker_label`` (the rows are never saved)."""
    for job in jobs:
        job.worker = worker_label(job.worker, user)
    return jobs


def run_jobs(run: Run, *, user: User | AnonymousUser) -> list[VerificationJob]:
    """A run's jobs, oldest first, as ``user`` may see them."""
    jobs = list(run.jobs.select_related("requested_by").order_by("created_at", "id"))
    return _as_seen_by(jobs, user)


def visible_job(user: User | AnonymousUser, job_id: int) -> VerificationJob | None:
    """A job of a run the requester may see, or None: a job of any other run answers
    exactly like a job that does not exist."""
    found = list(
        VerificationJob.objects.select_related("run", "requested_by").filter(
            pk=job_id, run__in=visible_runs(user).values("pk")
        )
    )
    return _as_seen_by(found, user)[0] if found else None


def job_diffs(jobs: list[VerificationJob]) -> list[dict[str, Any]]:
    """Each job beside what changed since the previous one (state and per-check results)."""
    out = []
    before: dict[str, str] = {}
    previous_state = None
    for job in jobs:
        now = {c["name"]: c["status"] for c in job.checks}
        changed = (
            sorted(
                f"{name}: {before.get(name, '-')} -> {status}"
                for name, status in now.items()
                if before.get(name) != status
            )
            if before
            else []
        )
        out.append(
            {
                "job": job,
                "changed": changed,
                "state_changed": previous_state is not None and previous_state != job.state,
            }
        )
        if now:
            before = now
        previous_state = job.state
    return out


def reasoning_audit_of(run: Run) -> dict[str, Any] | None:
    """The run's reasoning audit as its last verification re-derived it: its digest, the
    stored artifact's name and sha256, its counts and its cells (no excerpts: they are in
    the artifact). None for a run whose numbers the system has not proved, or that has
    none. One query."""
    if not run.proven:
        return None
    audit = ReasoningAudit.objects.filter(run=run).first()
    if audit is None:
        return None
    return {
        "audit_version": audit.audit_version,
        "digest": audit.digest,
        "artifact_sha256": audit.artifact_sha256,
        "artifact_name": audit.artifact_name,
        "texts": audit.texts,
        "date_hits": audit.date_hits,
        "issuer_hits": audit.issuer_hits,
        "cells": list(audit.cells),
        "not_scanned": audit.not_scanned,
        "created_at": audit.created_at,
    }


def changelog(limit: int = 200) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(public=True).select_related("actor", "run")[:limit]


def _recent_job_row(job: VerificationJob, shown: bool) -> dict[str, Any]:
    """A finished job's row. Of a run the requester may not see, only its state and how
    long it took: no job number, run id, body hash or link."""
    row: dict[str, Any] = {"job": None, "run_id": None, "page": None}
    if shown:
        row = {
            "job": job.pk,
            "run_id": job.run.run_id,
            "page": reverse("run", args=[job.run.body_sha256.removeprefix("sha256:")])
            + f"?submission={job.run.pk}",
        }
    return {
        **row,
        "state": job.state,
        "seconds": round((job.finished_at - job.created_at).total_seconds(), 3),  # type: ignore[operator]
    }


def status_data(user: User | AnonymousUser) -> dict[str, Any]:
    """The queue, every worker marked live or stale by its heartbeat, and the latest jobs,
    as ``user`` may see them: every job is counted, but only the runs ``visible_runs``
    lets them see are named, and workers go by ``worker_label``. Six queries, however
    many workers and jobs."""
    now = timezone.now()
    queue = machine.queue_summary(VerificationJob)
    stale_after = timedelta(seconds=settings.PITWEB_STALE_AFTER_SECONDS)
    workers = [
        {
            "worker": worker_label(w.name, user),
            "last_heartbeat": w.last_seen.isoformat(),
            "agent_isolation": "available"
            if w.isolation
            else f"unavailable: {w.isolation_unavailable or 'not probed'}",
            "state": "stopped"
            if w.stopped_at
            else ("live" if now - w.last_seen <= stale_after else "stale"),
        }
        for w in WorkerBeat.objects.order_by("-last_seen")[:50]
    ]
    recent = list(
        VerificationJob.objects.exclude(finished_at=None)
        .select_related("run")
        .only("state", "created_at", "finished_at", "run", "run__run_id", "run__body_sha256")
        .order_by("-finished_at")[:20]
    )
    shown = set(
        visible_runs(user).filter(pk__in={j.run_id for j in recent}).values_list("pk", flat=True)
    )
    return {
        "queue_depth": queue["depth"],
        "verifying": queue["running"],
        "oldest_waiting_seconds": (now - queue["oldest"]).total_seconds()
        if queue["oldest"]
        else None,
        "workers": workers,
        "recent_latencies": [_recent_job_row(j, j.run_id in shown) for j in recent],
    }
