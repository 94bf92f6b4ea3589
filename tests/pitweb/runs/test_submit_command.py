"""``pit-harness submit`` against a live site (the test server, its release registered):
a run verified by a real worker (exit 0, each state told, its page), a refuted one (exit
1, the check named), refusals (exit 2, in the API's words, nothing stored), the site's own
failure and no verdict in time (exit 3), and no progress bar unless both stdout and
stderr are terminals."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from harness.receipt.build import receipt_text
from pitweb.runs.models import JobState, Run
from tests.pitweb.conftest import Artifacts, submit_run
from tests.pitweb.runs.test_hostile_uploads import nothing_stored, stored
from tests.support.submit import Done, submit, submit_on_terminal

pytestmark = pytest.mark.django_db(transaction=True)

STATES = ["received", "verifying", "verified"]


@pytest.fixture()
def upload_tmp(settings: Any, tmp_path: Path) -> Path:
    """Where uploads spool (tests/pitweb/runs/test_hostile_uploads.py): empty after every
    request, refused or not."""
    folder = tmp_path / "uploads"
    folder.mkdir()
    settings.FILE_UPLOAD_TEMP_DIR = str(folder)
    return folder


@pytest.fixture()
def token(submitter: User) -> str:
    from pitweb.accounts.services import token_issue

    return token_issue(user=submitter)


@dataclass(frozen=True)
class Worker:
    pid: int
    log: Path


@pytest.fixture()
def real_worker(eager_celery: None, artifact_dir: Path, tmp_path: Path) -> Iterator[Worker]:
    """Uploads verified by a real Celery worker process on the real broker, never in the
    test's process."""
    from pitweb import celery_app
    from tests.pitweb.jobs.test_worker_integration import (
        real_broker_clean,
        stop,
        worker,
        worker_env,
    )

    celery_app.conf.task_always_eager = False
    real_broker_clean()
    log = tmp_path / "worker.log"
    process = worker(worker_env(artifact_dir), log, "submit")
    yield Worker(process.pid, log)
    stop(process)


def run_args(artifacts: Artifacts, receipt: Path | None = None) -> list[str]:
    assert artifacts.prices is not None
    return [
        str(receipt or artifacts.receipt),
        "--trajectory", str(artifacts.trajectory), "--prices", str(artifacts.prices),
    ]  # fmt: skip


def told(done: Done) -> list[str]:
    """The states the command told, in order (after the upload's line and the page's)."""
    return [line.split(":")[0] for line in done.out.splitlines()[2:]]


def inflated_receipt(artifacts: Artifacts, folder: Path) -> Path:
    """The receipt with every return raised by 10 points and honestly re-hashed: it passes
    every check at the door and is refuted only by re-deriving the scores."""
    data = json.loads(artifacts.receipt.read_text())
    for cell in data["body"]["cells"]:
        if cell["total_return"] is not None:
            cell["total_return"] += 0.1
    path = folder / "receipt-inflated.json"
    path.write_text(receipt_text(data["body"], data["emitted_at"]))
    return path


def test_a_run_verified_by_a_real_worker_exits_0_telling_each_state_and_its_page(
    live_server: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    token: str,
    real_worker: Worker,
    tmp_path: Path,
) -> None:
    done = submit(
        *run_args(stub_run), "--timeout", "180", home=tmp_path,
        PITWEB_URL=live_server.url, PITWEB_TOKEN=token,
    )  # fmt: skip
    assert done.code == 0, (done, real_worker.log.read_text()[-3000:])
    [run] = Run.objects.filter(submitter=submitter)
    job = run.jobs.get()
    assert (run.status, job.state) == (JobState.VERIFIED, JobState.VERIFIED)
    assert job.worker.endswith(f":{real_worker.pid}")  # the worker process, not this one
    lines = done.out.splitlines()
    assert lines[0] == f"uploaded run {run.run_id} as submission {run.pk}"
    assert lines[1] == f"page: {live_server.url}/runs/{run.body_sha256[7:]}/?submission={run.pk}"
    # each state once, in the order the site moves through them, ending verified
    states = told(done)
    assert states[-1] == "verified" and states == [s for s in STATES if s in states]
    assert lines[-1] == "verified: every hash and score re-derived and equal"
    assert done.err == ""


def test_an_inflated_receipt_is_refuted_exit_1_naming_the_check(
    live_server: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    token: str,
    real_worker: Worker,
    tmp_path: Path,
) -> None:
    receipt = inflated_receipt(stub_run, tmp_path)
    done = submit(
        *run_args(stub_run, receipt), "--timeout", "180", home=tmp_path,
        PITWEB_URL=live_server.url, PITWEB_TOKEN=token,
    )  # fmt: skip
    assert done.code == 1, (done, real_worker.log.read_text()[-3000:])
    job = Run.objects.get(submitter=submitter).jobs.get()
    assert job.state == JobState.MISMATCH and job.mismatch_check.endswith("total_return")
    assert done.out.splitlines()[-1].startswith(
        f"mismatch: {job.mismatch_check} differs from what the site re-derived (refuted"
    )
    assert "0.1" not in done.out.splitlines()[-1]  # the check by name, never the claimed value


def test_a_bad_token_is_refused_exit_2_in_words_and_nothing_is_stored(
    live_server: Any, registered: Any, stub_run: Artifacts, upload_tmp: Path, tmp_path: Path
) -> None:
    before = stored()
    done = submit(
        *run_args(stub_run), home=tmp_path, PITWEB_URL=live_server.url,
        PITWEB_TOKEN="pit_not-a-token-of-this-site",
    )  # fmt: skip
    assert done.code == 2, done
    assert done.err == (
        "pit-harness: refused by the site: unknown or revoked token "
        "(HTTP 401, authentication_failed)\n"
    )
    assert done.out == ""
    nothing_stored(before, upload_tmp)


def _truncated(a: Artifacts, folder: Path) -> list[str]:
    path = folder / "receipt.json"
    path.write_bytes(a.receipt.read_bytes()[:-40])
    return run_args(a, path)


def _nested(a: Artifacts, folder: Path) -> list[str]:
    path = folder / "receipt.json"
    path.write_bytes(b"[" * 5000 + b"]" * 5000)
    return run_args(a, path)


def _rehashed_wrong(a: Artifacts, folder: Path) -> list[str]:
    path = folder / "receipt.json"
    path.write_bytes(a.receipt.read_bytes().replace(b'"valid":true', b'"valid":false', 1))
    return run_args(a, path)


def _another_trajectory(a: Artifacts, folder: Path) -> list[str]:
    path = folder / "trajectory.jsonl"
    raw = bytearray(a.trajectory.read_bytes())
    raw[len(raw) // 2] ^= 1
    path.write_bytes(bytes(raw))
    args = run_args(a)
    args[2] = str(path)
    return args


def _without_prices(a: Artifacts, folder: Path) -> list[str]:
    return run_args(a)[:3]


HOSTILE = {
    "a truncated receipt": (_truncated, "invalid_json", 400),
    "a receipt nested 5000 deep": (_nested, "too_deep", 400),
    "a receipt whose hash does not match": (_rehashed_wrong, "receipt_hash_mismatch", 400),
    "a trajectory the receipt does not bind": (_another_trajectory, "trajectory_mismatch", 400),
    "a priced run without its price file": (_without_prices, "prices_required", 400),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_or_malformed_upload_is_refused_exit_2_in_words_and_nothing_is_stored(
    case: str,
    live_server: Any,
    registered: Any,
    stub_run: Artifacts,
    token: str,
    upload_tmp: Path,
    tmp_path: Path,
) -> None:
    make, code, status = HOSTILE[case]
    before = stored()
    done = submit(
        *make(stub_run, tmp_path), home=tmp_path, PITWEB_URL=live_server.url, PITWEB_TOKEN=token
    )
    assert done.code == 2, done
    said = re.fullmatch(r"pit-harness: refused by the site: (.+) \(HTTP (\d+), (\w+)\)\n", done.err)
    assert said is not None, done.err
    message, got_status, got_code = said.groups()
    assert (got_code, int(got_status)) == (code, status)
    assert message and "{" not in message  # words, not the JSON envelope
    assert done.out == ""
    nothing_stored(before, upload_tmp)


def test_an_oversized_trajectory_is_refused_exit_2_at_its_limit_and_nothing_is_stored(
    live_server: Any,
    registered: Any,
    stub_run: Artifacts,
    token: str,
    upload_tmp: Path,
    settings: Any,
    tmp_path: Path,
) -> None:
    settings.PITWEB_MAX_TRAJECTORY_BYTES = 4096
    assert stub_run.trajectory.stat().st_size > 50 * 4096
    before = stored()
    done = submit(
        *run_args(stub_run), home=tmp_path, PITWEB_URL=live_server.url, PITWEB_TOKEN=token
    )
    assert done.code == 2, done
    assert done.err == (
        "pit-harness: refused by the site: trajectory is larger than 4096 bytes "
        "(HTTP 413, too_large)\n"
    )
    nothing_stored(before, upload_tmp)


def test_a_verifier_failure_is_the_sites_error_exit_3_never_a_verdict(
    live_server: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    token: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from pitweb.runs import verification

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the verifier's disk is on fire")

    monkeypatch.setattr(verification, "rederive", broken)  # the served site is this process
    done = submit(
        *run_args(stub_run), home=tmp_path, PITWEB_URL=live_server.url, PITWEB_TOKEN=token
    )
    assert done.code == 3, done
    assert Run.objects.get(submitter=submitter).jobs.get().state == JobState.HARNESS_ERROR
    last = done.out.splitlines()[-1]
    assert last.startswith("harness_error: the site's verifier failed (verifier error: ")
    assert "disk is on fire" in last and last.endswith("not a verdict on the run")


def test_no_verdict_in_time_is_exit_3_naming_the_last_state(
    live_server: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    token: str,
    eager_celery: None,
    tmp_path: Path,
) -> None:
    from pitweb import celery_app
    from tests.pitweb.jobs.test_worker_integration import real_broker_clean

    celery_app.conf.task_always_eager = False  # and no worker: the job stays received
    real_broker_clean()
    done = submit(
        *run_args(stub_run), "--timeout", "2", home=tmp_path,
        PITWEB_URL=live_server.url, PITWEB_TOKEN=token,
    )  # fmt: skip
    real_broker_clean()
    assert done.code == 3, done
    assert told(done) == ["received"]
    assert done.err == (
        "pit-harness: error: no verdict after 2 s; last state received; the upload is "
        "stored: follow its page\n"
    )
    assert Run.objects.get(submitter=submitter).jobs.get().state == JobState.RECEIVED


def test_the_same_receipt_again_is_the_submission_it_already_is(
    live_server: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    token: str,
    tmp_path: Path,
) -> None:
    run = submit_run(submitter, stub_run)
    done = submit(
        *run_args(stub_run), home=tmp_path, PITWEB_URL=live_server.url, PITWEB_TOKEN=token
    )
    assert done.code == 0, done
    assert done.out == (
        f"already uploaded: run {run.run_id} is your submission {run.pk}\n"
        f"page: {live_server.url}/runs/{run.body_sha256[7:]}/?submission={run.pk}\n"
        "verified: every hash and score re-derived and equal\n"
    )
    assert Run.objects.count() == 1


def test_the_token_file_serves_when_the_environment_has_none(
    live_server: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    token: str,
    tmp_path: Path,
) -> None:
    from tests.support.submit import token_in_file

    token_in_file(tmp_path, token)
    done = submit(*run_args(stub_run), home=tmp_path, PITWEB_URL=live_server.url)
    assert done.code == 0, done
    assert Run.objects.get().submitter == submitter


def test_no_bar_is_drawn_when_stdout_is_not_a_terminal(
    live_server: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    token: str,
    tmp_path: Path,
) -> None:
    """stderr on a terminal, stdout piped (``| tee``, ``> file``): what is printed is byte
    for byte what a run with no terminal at all prints."""
    submit_run(submitter, stub_run)  # so both runs below are told the same: already uploaded
    env = {"PITWEB_URL": live_server.url, "PITWEB_TOKEN": token}
    code, out, shown = submit_on_terminal(
        *run_args(stub_run), home=tmp_path, stdout_terminal=False, **env
    )
    plain = submit(*run_args(stub_run), home=tmp_path, PIT_PROGRESS="0", **env)
    assert (code, plain.code) == (0, 0)
    assert out == plain.out.encode() and out.startswith(b"already uploaded: run ")
    assert shown == plain.err.encode() == b""


def test_a_bar_is_drawn_when_stdout_and_stderr_are_terminals(
    live_server: Any,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    token: str,
    tmp_path: Path,
) -> None:
    """The control for the test above: the same command on a terminal does draw a bar."""
    submit_run(submitter, stub_run)
    code, _, shown = submit_on_terminal(
        *run_args(stub_run), home=tmp_path, stdout_terminal=True,
        PITWEB_URL=live_server.url, PITWEB_TOKEN=token,
    )  # fmt: skip
    assert code == 0
    text = shown.decode()
    assert f"uploading {stub_run.receipt.name}, {stub_run.trajectory.name}" in text
    assert "KiB" in text and "\x1b[" in text  # drawn, then cleared (transient)
    assert "verified: every hash and score re-derived and equal" in text
