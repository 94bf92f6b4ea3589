"""What a board shows is versioned: every service that changes it bumps the version, and
cached boards are keyed by it."""

from __future__ import annotations

from django.db.models import F

from pitweb.runs.models import BoardVersion


def board_changed() -> None:
    """Invalidate cached boards (call inside the transaction that changed a run)."""
    updated = BoardVersion.objects.filter(pk=1).update(version=F("version") + 1)
    if not updated:
        BoardVersion.objects.get_or_create(pk=1)


def board_version() -> int:
    return BoardVersion.objects.filter(pk=1).values_list("version", flat=True).first() or 0
