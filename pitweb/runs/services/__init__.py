"""Writes on runs, one module per concern: ``intake`` (an upload checked and stored),
``verifying`` (verification jobs on the claimable-job machine), ``audits`` (a run's
reasoning audit stored), ``staff`` (staff actions, audited). Every function is the only way its rows change.

Imports go one way: services import models, ``pitweb.jobs``, ``pitweb.core`` and the
harness; tasks import services. A service reaches a task only through
``verifying.enqueue_verification``, which sends it by name on commit and never imports it. Services never
import ``pitweb.pricing``: a proven run is announced by the ``run_proven`` signal, which
pricing listens to. A change to what the board shows is announced through
``pitweb.board.changes.board_changed``, the one module of the board they import.
"""

from pitweb.artifacts import spool
from pitweb.board.changes import board_changed
from pitweb.jobs.machine import MAX_ATTEMPTS
from pitweb.runs.services.intake import Submission, run_submit
from pitweb.runs.services.staff import (
    jobs_requeue,
    run_reverify,
    run_set_flag,
    run_set_hidden,
    run_withdraw,
)
from pitweb.runs.services.verifying import (
    enqueue_verification,
    verification_claim,
    verification_finish,
    verification_heartbeat,
    verification_request,
    verification_requeue_stale,
    verification_retry,
)

__all__ = [
    "MAX_ATTEMPTS",
    "Submission",
    "board_changed",
    "enqueue_verification",
    "jobs_requeue",
    "run_reverify",
    "run_set_flag",
    "run_set_hidden",
    "run_submit",
    "run_withdraw",
    "spool",
    "verification_claim",
    "verification_finish",
    "verification_heartbeat",
    "verification_request",
    "verification_requeue_stale",
    "verification_retry",
]
