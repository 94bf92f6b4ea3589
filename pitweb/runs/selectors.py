"""Reads. Each costs a fixed number of queries however many runs there are."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.cache import cache
from django.db.models import F, Q, QuerySet

from pitweb.runs.models import AuditEvent, BoardVersion, Run, VerificationJob, VerificationLevel

VERIFIED_LEVEL = VerificationLevel.HASHES_VERIFIED
# The levels at which a run's numbers were proved (re-derived, or the agent re-run); a
# run at any other level shows no number from its body anywhere on the board.
PROVEN_LEVELS = (VerificationLevel.HASHES_VERIFIED, VerificationLevel.REEXECUTED)


def proven(run: Run) -> bool:
    return run.verification_level in PROVEN_LEVELS


def withheld_reason(run: Run) -> str:
    """Why a run's numbers are not shown, in words that never repeat a stated value."""
    if run.status == "mismatch":
        return f"failed verification: {run.failed_check or 'a check'} differs"
    return "pending verification: no numbers until the system has re-derived them"


def visible_runs(user: User | AnonymousUser) -> QuerySet[Run]:
    """Public, unhidden runs; plus a submitter's own; staff see everything."""
    runs = Run.objects.select_related("release", "submitter")
    if user.is_authenticated and user.is_staff:
        return runs
    public = Q(visibility="public", hidden=False)
    if user.is_authenticated:
        return runs.filter(public | Q(submitter=user))
    return runs.filter(public)


def leaderboard_row(run: Run) -> dict[str, Any]:
    """A board row. Numbers from the body only for a run whose numbers were proved; any
    other run says why they are withheld (the failed check by name, or pending)."""
    numbers: dict[str, Any] = (
        {"pit_main_return": run.pit_main_return, **run.summary, "numbers": "proven"}
        if proven(run)
        else {"numbers": "withheld", "withheld_because": withheld_reason(run)}
    )
    return {
        "run_id": run.run_id,
        "body_sha256": run.body_sha256,
        "release": run.release.name if run.release else run.release_digest,
        "forms": run.forms,
        "window": f"{run.window_start}..{run.window_end}",
        "agent": run.agent,
        "model_version": run.model_version or None,
        "baseline": run.is_baseline,
        **numbers,
        "failed_check": run.failed_check if run.status == "mismatch" else "",
        "verification": run.status,
        "verification_level": run.verification_level,
        "valid": run.valid,
        "protocol_complete": run.protocol_complete,
        "flag": run.flag,
        "submitted_at": run.submitted_at.isoformat(),
    }


PER_PAGE = 100
APART_LIMIT = 200


def _board_runs(
    user: User | AnonymousUser,
    release: str | None,
    form: str | None,
    start: str | None,
    end: str | None,
) -> QuerySet[Run]:
    runs = visible_runs(user).defer("body", "config", "release__manifest")
    if release:
        runs = runs.filter(Q(release__name=release) | Q(release_digest=release))
    if form:
        runs = runs.filter(forms__regex=rf"(^|,){re.escape(form)}(,|$)")
    if start:
        runs = runs.filter(window_start=start)
    if end:
        runs = runs.filter(window_end=end)
    return runs


def ranked_runs(runs: QuerySet[Run]) -> QuerySet[Run]:
    """Valid, scored runs whose last conclusive verification passed, by the pit clock's
    main-arm return. A re-verification in progress, or one the verifier itself failed
    (harness_error), does not take a run off the board; a mismatch does."""
    return runs.filter(
        valid=True, verification_level__in=PROVEN_LEVELS, pit_main_return__isnull=False
    ).order_by(F("pit_main_return").desc(), "run_id")


def _apart(runs: QuerySet[Run]) -> dict[str, QuerySet[Run]]:
    """Runs never ranked among verified ones, each for its own reason. Only proven runs
    show numbers; a run whose last conclusive verification failed is listed with the
    failed check, a run not yet verified as pending, whatever its receipt says."""
    newest = runs.order_by("-submitted_at")
    unproven = newest.exclude(verification_level__in=PROVEN_LEVELS)
    proven_runs = newest.filter(verification_level__in=PROVEN_LEVELS)
    return {
        "unscored": proven_runs.filter(valid=True, pit_main_return__isnull=True),
        "failed": unproven.filter(status="mismatch"),
        "pending": unproven.exclude(status="mismatch"),
        "invalid": proven_runs.filter(valid=False),
    }


def board_version() -> int:
    return BoardVersion.objects.filter(pk=1).values_list("version", flat=True).first() or 0


def leaderboard(
    *,
    user: User | AnonymousUser,
    release: str | None = None,
    form: str | None = None,
    start: str | None = None,
    end: str | None = None,
    page: int = 1,
    per_page: int = PER_PAGE,
) -> dict[str, Any]:
    """A page of ranked runs and, apart: verified runs without a score (no prices),
    failed and pending runs (no numbers), and invalid ones (network egress or aborted). Six queries,
    however many runs; the public board is cached until the next change (one query)."""
    if not user.is_authenticated:
        key = f"board:{board_version()}:{release}:{form}:{start}:{end}:{page}:{per_page}"
        cached = cache.get(key)
        if cached is None:
            cached = _leaderboard(user, release, form, start, end, page, per_page)
            cache.set(key, cached, timeout=300)
        return cached  # type: ignore[no-any-return]
    return _leaderboard(user, release, form, start, end, page, per_page)


def _leaderboard(
    user: User | AnonymousUser,
    release: str | None,
    form: str | None,
    start: str | None,
    end: str | None,
    page: int,
    per_page: int,
) -> dict[str, Any]:
    runs = _board_runs(user, release, form, start, end)
    ranked = ranked_runs(runs)
    total = ranked.count()
    pages = max(1, -(-total // per_page))
    page = min(max(1, page), pages)
    offset = (page - 1) * per_page
    rows = [leaderboard_row(r) for r in ranked[offset : offset + per_page]]
    for n, row in enumerate(rows, start=offset + 1):
        row["rank"] = n
    return {
        "ranked": rows,
        **{
            name: [leaderboard_row(r) for r in qs[:APART_LIMIT]]
            for name, qs in _apart(runs).items()
        },
        "pagination": {"page": page, "pages": pages, "per_page": per_page, "ranked_total": total},
    }


def leaderboard_export(
    *,
    user: User | AnonymousUser,
    release: str | None = None,
    form: str | None = None,
    start: str | None = None,
    end: str | None = None,
) -> dict[str, Any]:
    """The whole board for CSV/JSON export: every ranked run, then the rest."""
    runs = _board_runs(user, release, form, start, end)
    ranked = [leaderboard_row(r) for r in ranked_runs(runs).iterator(chunk_size=2000)]
    for n, row in enumerate(ranked, start=1):
        row["rank"] = n
    return {
        "ranked": ranked,
        **{name: [leaderboard_row(r) for r in qs] for name, qs in _apart(runs).items()},
    }


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
