"""Uploading runs: the happy path, idempotence, conflicts, and every bad upload."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage

from harness.receipt.build import receipt_text
from pitweb.board.query import SECTIONS
from pitweb.runs.models import JobState, Run, VerificationJob
from tests.pitweb.conftest import Artifacts, token_client

pytestmark = pytest.mark.django_db(transaction=True)


def upload(user: User, files: dict[str, Any]) -> Any:
    return token_client(user).post("/api/runs/", files, format="multipart")


def stored_names() -> set[str]:
    names: set[str] = set()
    for folder in ("trajectories", "receipts", "prices"):
        if default_storage.exists(folder):
            names |= {f"{folder}/{n}" for n in default_storage.listdir(folder)[1]}
    return names


def test_upload_creates_the_run_and_verifies_it(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    response = upload(submitter, stub_run.files())
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["page"].startswith("/runs/") and data["url"].startswith("/api/runs/")
    run = Run.objects.get(run_id=data["run_id"])
    assert len(run.body["cells"]) == 9 and len(run.body["probe"]["items"]) == 10
    job = run.jobs.get()
    assert job.state == JobState.VERIFIED, (job.mismatch_check, job.message)
    assert run.__class__.objects.get(pk=run.pk).verification_level == "hashes_verified"
    names = {c["name"] for c in job.checks}
    assert {
        "body_sha256",
        "trajectory_sha256",
        "bundle_content_digest",
        "cell main/pit total_return",
    } <= names
    assert data["jobs"][0]["state"] in (JobState.RECEIVED, JobState.VERIFIED)


def test_the_same_upload_twice_returns_the_existing_run(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    first = upload(submitter, stub_run.files())
    second = upload(submitter, stub_run.files())
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["body_sha256"] == second.json()["body_sha256"]
    assert Run.objects.count() == 1 and VerificationJob.objects.count() == 1


def test_same_run_id_with_another_body_is_a_conflict(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    assert upload(submitter, stub_run.files()).status_code == 201
    data = json.loads(stub_run.receipt.read_text())
    body = data["body"]
    body["cells"][0]["rejected_picks"] += 1  # another body, same run_id, honestly re-hashed
    forged = receipt_text(body, data["emitted_at"]).encode()
    response = upload(submitter, stub_run.files(receipt=forged))
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "run_id_conflict"
    assert Run.objects.count() == 1


def _tampered_trajectory(a: Artifacts) -> bytes:
    raw = bytearray(a.trajectory.read_bytes())
    raw[len(raw) // 2] ^= 1
    return bytes(raw)


def _set_start(body: dict[str, Any], day: str) -> None:
    from harness import canonical

    body["config"]["start"] = day
    body["binding"]["config_sha256"] = canonical.digest(body["config"])  # bound, but not a date


def _receipt_with(a: Artifacts, change: Any) -> bytes:
    data = json.loads(a.receipt.read_text())
    change(data["body"])
    return receipt_text(data["body"], data["emitted_at"]).encode()


BAD = {
    "truncated JSON": (lambda a: {"receipt": a.receipt.read_bytes()[:-40]}, "invalid_json"),
    "non-UTF-8 bytes": (lambda a: {"receipt": b"\xff\xfe" + a.receipt.read_bytes()}, "not_utf8"),
    "NaN in a float": (
        lambda a: {
            "receipt": a.receipt.read_bytes().replace(
                b'"hold_sessions":5', b'"hold_sessions":NaN', 1
            )
        },
        "invalid_json",
    ),
    "deeply nested JSON": (lambda a: {"receipt": b"[" * 5000 + b"]" * 5000}, "too_deep"),
    "moderately nested JSON": (
        lambda a: {
            "receipt": b'{"body":' + b"[" * 40 + b"]" * 40 + b',"body_sha256":"x","emitted_at":"x"}'
        },
        "too_deep",
    ),
    "a receipt whose hash does not match": (
        lambda a: {"receipt": a.receipt.read_bytes().replace(b'"valid":true', b'"valid":false', 1)},
        "receipt_hash_mismatch",
    ),
    "wrong types": (
        lambda a: {"receipt": _receipt_with(a, lambda b: b["cells"][0].update(trades="many"))},
        "invalid_receipt",
    ),
    "a tampered trajectory": (
        lambda a: {"trajectory": _tampered_trajectory(a)},
        "trajectory_mismatch",
    ),
    "a receipt for an unknown release": (
        lambda a: {
            "receipt": _receipt_with(
                a, lambda b: b["binding"].update(bundle_content_digest="sha256:" + "0" * 64)
            )
        },
        "unknown_release",
    ),
    "prices that are not the stated ones": (
        lambda a: {"prices": b"date,symbol,close\n2023-03-01,X,1\n"},
        "prices_mismatch",
    ),
    "not a receipt at all": (lambda a: {"receipt": b'{"hello": "world"}'}, "invalid_receipt"),
    "an impossible date": (
        lambda a: {"receipt": _receipt_with(a, lambda b: _set_start(b, "2023-02-30"))},
        "invalid_receipt",
    ),
    "a cell twice": (
        lambda a: {"receipt": _receipt_with(a, lambda b: b["cells"].append(dict(b["cells"][0])))},
        "invalid_receipt",
    ),
    "a probe item of the wrong type": (
        lambda a: {"receipt": _receipt_with(a, lambda b: b["probe"]["items"][0].update(item="x"))},
        "invalid_receipt",
    ),
    "a config that is not the bound one": (
        lambda a: {
            "receipt": _receipt_with(a, lambda b: b["config"].update(model_version="gpt-99"))
        },
        "config_mismatch",
    ),
    "a priced run without its price file": (lambda a: {"prices": None}, "prices_required"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_uploads_are_refused_and_store_nothing(
    registered: Any, submitter: User, stub_run: Artifacts, case: str
) -> None:
    make, code = BAD[case]
    before = stored_names()
    response = upload(submitter, stub_run.files(**make(stub_run)))
    assert 400 <= response.status_code < 500, response.content
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    assert Run.objects.count() == 0
    assert VerificationJob.objects.count() == 0
    assert stored_names() == before


def test_an_oversized_file_is_refused(
    registered: Any, submitter: User, stub_run: Artifacts, settings: Any
) -> None:
    settings.PITWEB_MAX_TRAJECTORY_BYTES = 1000
    response = upload(submitter, stub_run.files())
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    assert Run.objects.count() == 0


def test_missing_files_are_named(registered: Any, submitter: User, stub_run: Artifacts) -> None:
    response = token_client(submitter).post(
        "/api/runs/", {"receipt": stub_run.files()["receipt"]}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "missing_file",
        "message": "multipart field(s) trajectory required",
    }


def test_anonymous_upload_is_refused(registered: Any, stub_run: Artifacts) -> None:
    from rest_framework.test import APIClient

    response = APIClient().post("/api/runs/", stub_run.files(), format="multipart")
    assert response.status_code == 401 and response.json()["error"]["code"] == "not_authenticated"
    assert Run.objects.count() == 0


def test_someone_elses_private_receipt_reveals_nothing(
    registered: Any, submitter: User, other: User, stub_run: Artifacts
) -> None:
    first = upload(submitter, stub_run.files())
    Run.objects.filter(pk=first.json()["submission"]).update(visibility="private")
    again = upload(other, stub_run.files())
    # a submission of its own: nothing says that anyone else sent the same body
    assert again.status_code == 201, again.content
    data = again.json()
    assert data["submission"] != first.json()["submission"]
    assert str(submitter.username) not in again.content.decode()
    assert Run.objects.get(pk=data["submission"]).submitter == other
    listed = token_client(other).get("/api/runs/").json()
    assert [r["submission"] for r in listed] == [data["submission"]]
    page = token_client(other).get(f"/runs/{data['body_sha256'][7:]}/").content.decode()
    assert "also submitted by" not in page


def test_a_squatted_run_id_does_not_block_the_honest_run(
    registered: Any, submitter: User, other: User, stub_run: Artifacts
) -> None:
    """B uploads a forged body carrying A's run_id (derivable from a public config)
    before A does: A's honest run is still accepted, both are listed, B's fails."""

    def inflate(body: dict[str, Any]) -> None:
        for cell in body["cells"]:
            if cell["total_return"] is not None:
                cell["total_return"] += 0.1

    squat = _receipt_with(stub_run, inflate)
    squatter = upload(other, stub_run.files(receipt=squat))
    assert squatter.status_code == 201, squatter.content
    honest = upload(submitter, stub_run.files())
    assert honest.status_code == 201, honest.content
    assert squatter.json()["run_id"] == honest.json()["run_id"]
    states = {r.submitter.username: r.status for r in Run.objects.select_related("submitter")}
    assert states == {"bob": "mismatch", "alice": "verified"}
    board = token_client(submitter).get("/api/leaderboard/?all=1").json()
    on_board = {(r["submitter"], r["verification"]) for name in SECTIONS for r in board[name]}
    assert on_board == {("bob", "mismatch"), ("alice", "verified")}
