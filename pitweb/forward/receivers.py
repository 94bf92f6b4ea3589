"""What the forward track does when other apps announce something; connected in
``ForwardConfig.ready``. Each receiver only sends a task after the transaction commits."""

from __future__ import annotations

from typing import Any

from pitweb.jobs.dispatch import send_on_commit
from pitweb.releases.models import Release
from pitweb.runs.models import Run

SCHEDULE_TASK = "pitweb.forward.tasks.forward_schedule_task"
CHECK_TASK = "pitweb.forward.tasks.forward_check_task"


def schedule_version(sender: Any, release: Release, **kwargs: Any) -> None:
    """A release version was registered: its forward runs are queued by a worker."""
    send_on_commit(SCHEDULE_TASK, release.pk)


def check_proven(sender: Any, run: Run, **kwargs: Any) -> None:
    """A run was proven: if an execution of the forward track made it, it is checked."""
    from pitweb.forward.models import ForwardRun

    for pk in ForwardRun.objects.filter(job__made=run).values_list("pk", flat=True):
        send_on_commit(CHECK_TASK, pk)
