"""What the accounts tests share: a submitter's private run."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts


@pytest.fixture()
def private_run(registered: Any, submitter: User, stub_run: Artifacts) -> Run:
    files = stub_run.files()
    run = services.run_submit(
        user=submitter,
        receipt=files["receipt"],
        trajectory=files["trajectory"],
        prices=files["prices"],
    ).run
    Run.objects.filter(pk=run.pk).update(visibility="private")
    run.refresh_from_db()
    return run
