"""Reads. Each costs a fixed number of queries however many runs there are."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q, QuerySet

from pitweb.runs.models import AuditEvent, JobState, Run, VerificationJob

CLOCKS = ("leaky", "dump", "pit")
ARMS = ("main", "redacted", "shifted")


def visible_runs(user: User | AnonymousUser) -> QuerySet[Run]:
    """Public, unhidden runs; plus a submitter's own; staff see everything."""
    runs = Run.objects.select_related("release", "submitter")
    if user.is_authenticated and user.is_staff:
        return runs
    public = Q(visibility="public", hidden=False)
    if user.is_authenticated:
        return runs.filter(public | Q(submitter=user))
    return runs.filter(public)


def cell_returns(body: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """{arm: {clock: total_return}} from a receipt body."""
    out: dict[str, dict[str, float | None]] = {arm: {} for arm in ARMS}
    for cell in body.get("cells", []):
        out.setdefault(cell["arm"], {})[cell["clock"]] = cell["total_return"]
    return out


def leaderboard_row(run: Run) -> dict[str, Any]:
    body = run.body
    returns = cell_returns(body)
    contamination = body.get("contamination", {})
    probe = body.get("probe", {})
    return {
        "run_id": run.run_id,
        "body_sha256": run.body_sha256,
        "release": run.release.name if run.release else run.release_digest,
        "forms": run.forms,
        "window": f"{run.window_start}..{run.window_end}",
        "agent": run.agent,
        "model_version": run.model_version or None,
        "baseline": run.is_baseline,
        "pit_main_return": run.pit_main_return,
        **{f"main_{clock}": returns["main"].get(clock) for clock in CLOCKS},
        **{
            f"delta_shifted_{clock}": (contamination.get(clock) or {}).get("main_minus_shifted")
            for clock in CLOCKS
        },
        **{
            f"delta_redacted_{clock}": (contamination.get(clock) or {}).get("main_minus_redacted")
            for clock in CLOCKS
        },
        "mask_verdict": probe.get("verdict", "not_run"),
        "probe_recovered": f"{probe.get('recovered', 0)}/{probe.get('total', 0)}",
        "verification": run.status,
        "verification_level": run.verification_level,
        "valid": run.valid,
        "protocol_complete": run.protocol_complete,
        "protocol_gaps": ",".join(body.get("protocol_gaps", [])),
        "flag": run.flag,
        "submitted_at": run.submitted_at.isoformat(),
    }


def leaderboard(
    *,
    user: User | AnonymousUser,
    release: str | None = None,
    form: str | None = None,
    start: str | None = None,
    end: str | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Ranked (verified and valid, by the pit clock's main-arm return), and apart:
    unverified, and invalid (network egress or aborted) runs. One query."""
    runs = visible_runs(user)
    if release:
        runs = runs.filter(Q(release__name=release) | Q(release_digest=release))
    if form:
        runs = runs.filter(forms__regex=rf"(^|,){form}(,|$)")
    if start:
        runs = runs.filter(window_start=start)
    if end:
        runs = runs.filter(window_end=end)
    ranked, unverified, invalid = [], [], []
    for run in runs.order_by("-submitted_at"):
        row = leaderboard_row(run)
        if not run.valid:
            invalid.append(row)
        elif run.status != JobState.VERIFIED:
            unverified.append(row)
        else:
            ranked.append(row)
    ranked.sort(
        key=lambda r: (r["pit_main_return"] is None, -(r["pit_main_return"] or 0.0), r["run_id"])
    )
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
    return {"ranked": ranked, "unverified": unverified, "invalid": invalid}


def run_jobs(run: Run) -> list[VerificationJob]:
    return list(run.jobs.select_related("requested_by").order_by("created_at", "id"))


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


def changelog(limit: int = 200) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(public=True).select_related("actor", "run")[:limit]
