"""What the accounts tests share: a submitter's private run."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run


@pytest.fixture()
def private_run(registered: Any, submitter: User, stub_run: Artifacts) -> Run:
    run = submit_run(submitter, stub_run)
    Run.objects.filter(pk=run.pk).update(visibility="private")
    run.refresh_from_db()
    return run
