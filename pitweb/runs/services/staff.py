"""Staff actions on runs: re-verify, requeue stuck jobs, hide, flag; and the one action
a submitter takes on their own run: withdraw it. Each needs a reason and is audited
(public unless the run is private)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from pitweb.board.changes import board_changed
from pitweb.core.audit import audit_record
from pitweb.core.inputs import readable, require_reason
from pitweb.runs.models import Run, VerificationJob
from pitweb.runs.services.verifying import verification_request, verification_requeue_stale
from pitweb.runs.signals import run_taken_down


def jobs_requeue(*, staff: User, run: Run | None, reason: str) -> list[int]:
    """Staff: requeue now every job whose worker stopped heart-beating (the sweep's
    rule, not sooner: a live worker's job is never taken from it). Audited."""
    reason = require_reason(reason)
    moved = verification_requeue_stale()
    audit_record(
        actor=staff,
        action="requeue",
        run=run,
        reason=f"{reason} (jobs {moved or 'none'})",
        public=run is None or run.visibility == "public",
    )
    return moved


def run_reverify(*, run: Run, staff: User, reason: str) -> VerificationJob:
    reason = require_reason(reason)
    with transaction.atomic():
        job = verification_request(
            run=run, kind=VerificationJob.Kind.REVERIFY, requested_by=staff, reason=reason
        )
        audit_record(
            actor=staff,
            action="reverify",
            run=run,
            reason=reason,
            public=run.visibility == "public",
        )
    return job


def _staff_change(*, run: Run, staff: User, action: str, reason: str, **fields: Any) -> Run:
    """Change a run's staff-controlled fields and publish who did it and why."""
    reason = require_reason(reason)
    with transaction.atomic():
        Run.objects.filter(pk=run.pk).update(**fields)
        board_changed(runs=[run.pk], taken_off=fields.get("hidden") is True)
        if fields.get("hidden") is True:
            run_taken_down.send(sender=Run, run=run, reason=f"hidden by staff: {reason}")
        audit_record(
            actor=staff, action=action, run=run, reason=reason, public=run.visibility == "public"
        )
    run.refresh_from_db()
    return run


def run_set_hidden(*, run: Run, staff: User, hidden: bool, reason: str) -> Run:
    return _staff_change(
        run=run,
        staff=staff,
        action="hide" if hidden else "unhide",
        reason=reason,
        hidden=hidden,
        hidden_reason=reason.strip() if hidden else "",
    )


def run_set_flag(*, run: Run, staff: User, flag: str, reason: str) -> Run:
    flag = readable(flag, "flag")
    return _staff_change(
        run=run, staff=staff, action="flag" if flag else "unflag", reason=reason, flag=flag[:200]
    )


def run_withdraw(*, run: Run, owner: User, reason: str) -> Run:
    """The submitter takes their run off every board and public page, for good. It stays
    an attempt of its family: the count is never lowered. Withdrawing twice changes
    nothing more."""
    if run.submitter_id != owner.pk:
        raise PermissionError("only the run's submitter can withdraw it")
    reason = require_reason(reason)
    with transaction.atomic():
        moved = Run.objects.filter(pk=run.pk, withdrawn_at=None).update(withdrawn_at=timezone.now())
        if moved:
            board_changed(runs=[run.pk], taken_off=True)
            run_taken_down.send(sender=Run, run=run, reason=f"withdrawn by its submitter: {reason}")
            audit_record(
                actor=owner, action="withdraw", run=run, reason=reason,
                public=run.visibility == "public",
            )  # fmt: skip
    run.refresh_from_db()
    return run
