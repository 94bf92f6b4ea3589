"""The audit log: every staff action is a row, written in the transaction of the action."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth.models import User

from pitweb.core.models import AuditEvent

if TYPE_CHECKING:
    from django.db.models import Model


def audit_record(
    *, actor: User | None, action: str, reason: str, run: Model | None = None, public: bool
) -> AuditEvent:
    """Record who did ``action`` (to ``run``, if any) and why; ``public`` events are
    listed on the changelog."""
    return AuditEvent.objects.create(
        actor=actor, action=action, run_id=run.pk if run else None, reason=reason, public=public
    )
