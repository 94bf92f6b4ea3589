"""A run taken down (withdrawn, hidden or refuted by a re-verification): its certificates
are revoked, so the signed list says so to anyone holding one."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from pitweb.certificates.services import certificates_revoke_for_run
from pitweb.runs.models import Run
from pitweb.runs.signals import run_taken_down


@receiver(run_taken_down)
def revoke_certificates(sender: Any, run: Run, reason: str, **_: Any) -> None:
    certificates_revoke_for_run(run=run, reason=reason)
