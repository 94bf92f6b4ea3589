"""Failures land on the right side: what the submitted bytes cause is a mismatch naming
the check (theirs); only our own faults are harness_error, and a timeout is final."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from harness.receipt.build import receipt_text
from pitweb.runs.models import JobState, Run
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)


def submit(
    user: User, artifacts: Artifacts, receipt: bytes, trajectory: bytes | None = None
) -> Run:
    replace = {"receipt": receipt, **({"trajectory": trajectory} if trajectory else {})}
    return submit_run(user, artifacts, **replace)  # type: ignore[no-any-return]


def forged(a: Artifacts, change: Callable[[dict[str, Any]], None]) -> bytes:
    data = json.loads(a.receipt.read_text())
    change(data["body"])
    return receipt_text(data["body"], data["emitted_at"]).encode()


def with_trajectory(a: Artifacts, extra: bytes) -> tuple[bytes, bytes]:
    """The honest trajectory with a line appended, and the receipt re-bound to it."""
    trajectory = a.trajectory.read_bytes() + extra
    sha = "sha256:" + hashlib.sha256(trajectory).hexdigest()
    return forged(a, lambda b: b["binding"].update(trajectory_sha256=sha)), trajectory


def _claim_complete(body: dict[str, Any]) -> None:
    body.update(protocol_complete=True, protocol_gaps=[])


def _claim_recovered(body: dict[str, Any]) -> None:
    body["probe"]["recovered"] = body["probe"]["total"]


@pytest.mark.parametrize(
    ("change", "check"),
    [
        (_claim_complete, "protocol_gaps"),
        (_claim_recovered, "probe totals"),
        (
            lambda b: b["protocol"]["P1_model_version"].update(status="declared", declared="gpt-5"),
            "protocol P1_model_version",
        ),
    ],
)
def test_a_forged_board_field_is_a_mismatch_naming_it(
    change: Callable[[dict[str, Any]], None],
    check: str,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
) -> None:
    run = submit(submitter, stub_run, forged(stub_run, change))
    job = run.jobs.get()
    assert job.state == JobState.MISMATCH and job.mismatch_check == check, job.message
    assert run.verification_level == "self_reported" and job.attempts == 1


@pytest.mark.parametrize(
    "line", [b"[]\n", b"[" * 5000 + b"]" * 5000 + b"\n", b"not json\n", b'{"event": "decision"}\n']
)
def test_a_malformed_trajectory_line_is_theirs_not_ours(
    line: bytes, registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    receipt, trajectory = with_trajectory(stub_run, line)
    run = submit(submitter, stub_run, receipt, trajectory)
    job = run.jobs.get()
    assert job.state == JobState.MISMATCH, (job.state, job.message)
    assert job.mismatch_check == "trajectory_format" and job.attempts == 1


def test_a_verifier_timeout_is_final_and_ours(
    registered: Any, submitter: User, stub_run: Artifacts, monkeypatch: pytest.MonkeyPatch
) -> None:
    from celery.exceptions import SoftTimeLimitExceeded

    from pitweb.runs import verification

    calls: list[int] = []

    def slow(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(verification, "rederive", slow)
    run = submit(submitter, stub_run, stub_run.receipt.read_bytes())
    job = run.jobs.get()
    assert job.state == JobState.HARNESS_ERROR and "time limit" in job.message
    assert len(calls) == 1 and job.attempts == 1  # not retried
    assert run.verification_level == "self_reported" and run.failed_check == ""
