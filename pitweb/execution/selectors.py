"""Reads for the execution pages and API: who may see a job, its cells as a progress
table, and a divergence as two columns."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q, QuerySet

from pitweb.core.params import parse_id
from pitweb.execution.models import ExecutionJob, RegisteredAgent
from pitweb.runs.selectors import visible_runs, worker_label


def visible_agents(user: User | AnonymousUser) -> QuerySet[RegisteredAgent]:
    """Staff see every registered agent; an owner sees theirs; nobody else any (an HTTP
    agent's endpoint is its owner's business)."""
    agents = RegisteredAgent.objects.select_related("owner")
    if user.is_authenticated and user.is_staff:
        return agents
    if user.is_authenticated:
        return agents.filter(owner=user)
    return agents.none()


def visible_jobs(user: User | AnonymousUser) -> QuerySet[ExecutionJob]:
    """A job the requester may see: staff every one; otherwise an execution of an agent
    they own or asked for, and a job whose run (made or checked) they may see."""
    jobs = ExecutionJob.objects.select_related(
        "agent", "release", "checked", "made", "requested_by"
    )
    if user.is_authenticated and user.is_staff:
        return jobs
    runs = visible_runs(user).values("pk")
    shown = Q(made__in=runs) | Q(checked__in=runs)
    if user.is_authenticated:
        # an owner's own executions; a re-execution only with the run it checks, which
        # may be another submitter's (private or hidden): that rule is the run's
        shown |= (Q(agent__owner=user) | Q(requested_by=user)) & Q(checked__isnull=True)
    return jobs.filter(shown)


def visible_job(user: User | AnonymousUser, raw_id: str) -> ExecutionJob | None:
    """The job a page's or the API's id names, if the requester may see it; a malformed
    id answers like a missing job."""
    try:
        pk = parse_id(raw_id)
    except ValueError:
        return None
    return visible_jobs(user).filter(pk=pk).first() if pk is not None else None


def cells(job: ExecutionJob, user: User | AnonymousUser) -> list[dict[str, Any]]:
    """The job's cells in the runner's order, each with its worker as ``user`` may see it."""
    return [
        {
            "cell": cell.label,
            "state": cell.state,
            "status": cell.status,
            "sessions": cell.sessions,
            "attempts": cell.attempts,
            "worker": worker_label(cell.worker, user),
            "message": cell.message,
            "started_at": cell.started_at,
            "finished_at": cell.finished_at,
        }
        for cell in job.cells.order_by("position")
    ]


def _shown(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False)


def side_by_side(comparison: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A divergence's fields, the recorded value beside the re-executed one (as JSON)."""
    divergence = (comparison or {}).get("divergence")
    if not divergence:
        return []
    # a step one side lacks is None; a fact may be false, and is shown as it is
    recorded = {} if divergence.get("recorded") is None else divergence["recorded"]
    again = {} if divergence.get("reexecuted") is None else divergence["reexecuted"]
    if not isinstance(recorded, dict) or not isinstance(again, dict):
        # a decision, or one fact of a cell or of the run (its valid, say), whole
        field = divergence.get("field") or "decision"
        return [{"field": field, "recorded": _shown(recorded), "reexecuted": _shown(again),
                 "differs": True}]  # fmt: skip
    return [
        {
            "field": key,
            "recorded": _shown(recorded[key]) if key in recorded else "(absent)",
            "reexecuted": _shown(again[key]) if key in again else "(absent)",
            "differs": recorded.get(key) != again.get(key),
        }
        for key in sorted(recorded.keys() | again.keys())
    ]
