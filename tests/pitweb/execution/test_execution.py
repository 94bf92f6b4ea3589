"""Runs the site executes: registered agents (packages installed on the workers, HTTP
endpoints on the allowlist and public addresses only), executions whose cells are jobs
of their own and whose assembled run equals the CLI's, and re-executions that raise a run
to ``reexecuted`` or show where its agent decided otherwise.

Celery runs eagerly here (each cell, then the assembly, then the verification); the
real workers are in test_execution_workers.py."""

from __future__ import annotations

import hashlib
import http.server
import shutil
import threading
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client

from harness import RunConfig, run
from harness.agents.external import command_agent
from pitweb.core.errors import SubmissionError
from pitweb.execution import services
from pitweb.execution.models import ExecutionCell, ExecutionJob, ExecutionState, RegisteredAgent
from pitweb.runs.models import JobState, Run, VerificationLevel
from tests.pitweb.conftest import Artifacts, submit_run
from tests.support.golden import body_text
from tests.support.sandbox import require_sandbox

pytestmark = pytest.mark.django_db(transaction=True)
REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "agents"
WINDOW = {"start": date(2023, 3, 1), "end": date(2023, 3, 8), "forms": ["8-K"], "probe": 4}

# an agent that picks by the dice: never the same twice
RANDOM_AGENT = """
import json, random, sys
for line in sys.stdin:
    task = json.loads(line)
    if task.get("type") != "task":
        continue
    picks = [] if task["kind"] == "probe" else [f"nothing-{random.random()}"]
    print(json.dumps({"type": "decision", "picks": picks, "text": str(random.random())}),
          flush=True)
"""


@pytest.fixture()
def packages(settings: Any, tmp_path: Path) -> dict[str, Any]:
    random_agent = tmp_path / "random_agent.py"
    random_agent.write_text(RANDOM_AGENT)
    settings.PITWEB_AGENT_PACKAGES = {
        "pit-stdio-python": {
            "argv": ["python3", "{examples}/agents/pit_stdio.py"],
            "dialect": "pit",
        },
        "dice": {"argv": ["python3", str(random_agent)], "dialect": "pit"},
    }
    return settings.PITWEB_AGENT_PACKAGES


def _cli_run(
    release: Path, out: Path, prices: Path | None, argv: list[str], process: str = "isolated"
) -> Artifacts:
    """The run the CLI makes of the same agent and config."""
    config: dict[str, Any] = {
        "bundle_path": str(release),
        "forms": ("8-K",),
        "start": "2023-03-01",
        "end": "2023-03-08",
        "probe": 4,
        "agent_process": process,
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
    }
    if prices is not None:
        config["prices"] = {"path": str(prices), "source": "SYNTHETIC reference prices",
                            "pulled_at": "generated"}  # fmt: skip
    run(command_agent(argv), RunConfig(**config))
    return Artifacts(out / "receipt.json", out / "trajectory.jsonl", prices)


def _reference_upload(
    staff: User, owner: User, submitter: User, release: Path, tmp_path: Path
) -> Run:
    """The reference agent registered for ``owner``, and a CLI run of it uploaded by
    ``submitter`` (verified on arrival)."""
    require_sandbox()
    services.agent_register(by=staff, name="ref", owner=owner, package="pit-stdio-python")
    argv = ["python3", str(EXAMPLES / "pit_stdio.py")]
    return submit_run(submitter, _cli_run(release, tmp_path / "up", None, argv))


def test_a_registered_package_is_executed_cell_by_cell_and_equals_the_cli_run(
    priced_release: Any, submitter: User, staff: User, packages: Any, site_release: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    require_sandbox()
    agent = services.agent_register(
        by=staff, name="ref", owner=submitter, package="pit-stdio-python"
    )
    assert agent.transport == "stdio" and agent.digest.startswith("sha256:")
    job = services.execution_request(by=submitter, agent=agent, release=priced_release, **WINDOW)
    job.refresh_from_db()
    assert job.state == ExecutionState.EXECUTED, job.message
    cells = list(job.cells.all())
    assert [c.label for c in cells][:3] == ["main/leaky", "main/dump", "main/pit"]
    assert all(c.state == ExecutionCell.State.DONE and c.status == "complete" for c in cells)
    made = job.made
    assert made is not None and made.executed and made.status == JobState.VERIFIED
    assert made.verification_level == VerificationLevel.REEXECUTED
    # each cell's record lies in storage under its digest, which its row keeps ...
    for cell in cells:
        with default_storage.open(cell.record_name, "rb") as handle:
            assert "sha256:" + hashlib.sha256(handle.read()).hexdigest() == cell.record_sha256
    assert len({cell.record_sha256 for cell in cells}) == len(cells)
    # ... and one changed there is refused when the records are read back
    default_storage.delete(cells[4].record_name)
    default_storage.save(cells[4].record_name, ContentFile(b'{"outcome": {}}'))
    with pytest.raises(ValueError, match=f"record of cell {cells[4].label} in storage"):
        services.cell_records(job)
    # the CLI, on the same release and with the same reference prices (same file name)
    reference = priced_release.reference_prices.get()
    prices = tmp_path / Path(reference.file_name).name
    with default_storage.open(reference.file_name, "rb") as src, open(prices, "wb") as dst:
        shutil.copyfileobj(src, dst)
    cli = _cli_run(site_release, tmp_path / "cli", prices,
                   ["python3", str(EXAMPLES / "pit_stdio.py")])  # fmt: skip
    with default_storage.open(made.trajectory_name, "rb") as handle:
        assert handle.read() == cli.trajectory.read_bytes()
    site_receipt = tmp_path / "site-receipt.json"
    with default_storage.open(made.receipt_name, "rb") as handle:
        site_receipt.write_bytes(handle.read())
    assert body_text(site_receipt) == body_text(cli.receipt)
    # the run page says who ran it and links the job; the job page shows every cell
    page = Client().get(f"/runs/{made.body_sha256.removeprefix('sha256:')}/").content.decode()
    assert f"/executions/{job.pk}/" in page
    assert "executed by this site" in page
    progress = Client().get(f"/executions/{job.pk}/").content.decode()
    assert progress.count("complete") >= 9 and "shifted/pit" in progress


def test_an_uploaded_run_is_reexecuted_and_raised_to_reexecuted(
    registered: Any, submitter: User, staff: User, packages: Any, site_release: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    require_sandbox()
    agent = services.agent_register(
        by=staff, name="ref", owner=submitter, package="pit-stdio-python"
    )
    # made in the harness's own process: by its receipt, not isolated
    argv = ["python3", str(EXAMPLES / "pit_stdio.py")]
    uploaded = submit_run(
        submitter, _cli_run(site_release, tmp_path / "up", None, argv, "in_process")
    )
    assert uploaded.verification_level == VerificationLevel.HASHES_VERIFIED
    assert not uploaded.agent_isolated
    board = Client().get("/api/leaderboard/?isolated=1&all=1").content.decode()
    assert uploaded.run_id not in board
    assert services.agent_of_run(uploaded) == agent  # matched by digest
    job = services.reexecution_request(by=staff, run=uploaded, reason="check the upload")
    job.refresh_from_db()
    assert job.state == ExecutionState.REPRODUCED, job.message
    assert job.comparison["result"] == "reproduced" and job.comparison["steps_compared"] > 0
    uploaded.refresh_from_db()
    assert uploaded.verification_level == VerificationLevel.REEXECUTED
    assert Run.objects.count() == 1  # a re-execution stores no second run
    # the board's "isolated or re-executed only" filter now keeps it, and says why
    board = Client().get("/api/leaderboard/?isolated=1&all=1").content.decode()
    assert uploaded.run_id in board and "re-executed by the site; not isolated" in board
    page = Client().get(f"/runs/{uploaded.body_sha256.removeprefix('sha256:')}/").content.decode()
    assert f"/executions/{job.pk}/" in page and "reproduced" in page
    assert "9/9 cells done" in page  # each cell's progress, from the run it checks


def test_a_dice_agent_reexecuted_shows_where_it_parts_side_by_side(
    registered: Any, submitter: User, staff: User, packages: Any, site_release: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    require_sandbox()
    services.agent_register(by=staff, name="dice", owner=submitter, package="dice")
    argv = packages["dice"]["argv"]
    uploaded = submit_run(submitter, _cli_run(site_release, tmp_path / "up", None, argv))
    job = services.reexecution_request(by=staff, run=uploaded, reason="dice")
    job.refresh_from_db()
    assert job.state == ExecutionState.DIVERGED, job.message
    divergence = job.comparison["divergence"]
    assert divergence["cell"] == "main/leaky" and divergence["step"] == 1
    assert divergence["recorded"] != divergence["reexecuted"]
    uploaded.refresh_from_db()
    assert uploaded.verification_level == VerificationLevel.HASHES_VERIFIED  # not raised
    page = Client().get(f"/executions/{job.pk}/").content.decode()
    assert "main/leaky" in page and "recorded" in page and "re-executed" in page
    # both decisions shown, each as it was
    assert divergence["recorded"]["rejected"][0]["row_key"] in page
    assert divergence["reexecuted"]["rejected"][0]["row_key"] in page


def test_only_staff_register_and_only_installed_packages(
    submitter: User, staff: User, packages: Any
) -> None:
    with pytest.raises(SubmissionError, match="only staff"):
        services.agent_register(by=submitter, name="x", owner=submitter, package="dice")
    with pytest.raises(SubmissionError, match="no agent package 'rm -rf /'"):
        services.agent_register(by=staff, name="x", owner=submitter, package="rm -rf /")
    with pytest.raises(SubmissionError, match="exactly one"):
        services.agent_register(by=staff, name="x", owner=submitter)
    for name in ("A" * 3, "x" * 101, "a b", "-x", ""):  # refused before any row is written
        with pytest.raises(SubmissionError, match="name: lower-case"):
            services.agent_register(by=staff, name=name, owner=submitter, package="dice")
    with pytest.raises(SubmissionError, match="longer than 500"):
        services.agent_register(by=staff, name="x", owner=submitter, url="http://a/" + "b" * 500)
    assert not RegisteredAgent.objects.exists()


class _Redirecting(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_POST(self) -> None:
        type(self).hits.append(self.path)
        self.send_response(307)
        self.send_header("Location", "http://127.0.0.1:9/step")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def redirecting() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_endpoint_at_a_private_address_is_refused(
    settings: Any, submitter: User, staff: User, redirecting: str
) -> None:
    settings.PITWEB_AGENT_HOSTS = ["127.0.0.1", "localhost", "169.254.169.254"]
    settings.PITWEB_AGENT_PRIVATE_ADDRESSES = False
    port = redirecting.rsplit(":", 1)[1]
    for url, code in [
        (redirecting, "private_address"),  # loopback, as a literal
        (f"http://localhost:{port}", "private_address"),  # via a DNS name
        ("http://169.254.169.254/latest", "private_address"),  # the cloud's metadata
        ("http://example.org/agent", "host_not_allowed"),
        ("ftp://127.0.0.1/agent", "invalid_endpoint"),
    ]:
        with pytest.raises(SubmissionError) as refused:
            services.agent_register(by=staff, name="h", owner=submitter, url=url)
        assert refused.value.code == code, (url, refused.value.message)
    assert not RegisteredAgent.objects.exists() and not _Redirecting.hits


def test_a_redirect_is_never_followed_and_a_later_private_address_is_refused_at_connect(
    settings: Any, registered: Any, submitter: User, staff: User, redirecting: str
) -> None:
    settings.PITWEB_AGENT_HOSTS = ["127.0.0.1"]
    settings.PITWEB_AGENT_PRIVATE_ADDRESSES = True  # allowed at registration (a test host)
    agent = services.agent_register(by=staff, name="h", owner=submitter, url=redirecting)
    _Redirecting.hits.clear()
    job = services.execution_request(by=submitter, agent=agent, release=registered, **WINDOW)
    job.refresh_from_db()
    assert job.state == ExecutionState.EXECUTED, job.message
    assert job.made is not None
    # every cell ends on the agent's 307, which is its protocol fault: not followed
    faults = {c["agent_fault"]["message"] for c in job.made.body["cells"]}
    assert all("answered HTTP 307" in f for f in faults), faults
    assert _Redirecting.hits and all(h == "/step" for h in _Redirecting.hits)
    # the site's policy changes: the same endpoint is refused at every connect
    settings.PITWEB_AGENT_PRIVATE_ADDRESSES = False
    _Redirecting.hits.clear()
    shorter = {**WINDOW, "end": date(2023, 3, 7)}  # another run (the same one is refused)
    again = services.execution_request(by=submitter, agent=agent, release=registered, **shorter)
    again.refresh_from_db()
    assert again.made is not None and not _Redirecting.hits
    statuses = {c["status"] for c in again.made.body["cells"]}
    assert statuses == {"harness_error"}, statuses


def test_an_execution_is_asked_for_by_the_owner_within_the_release(
    registered: Any, submitter: User, other: User, staff: User, packages: Any
) -> None:
    agent = services.agent_register(
        by=staff, name="ref", owner=submitter, package="pit-stdio-python"
    )
    with pytest.raises(SubmissionError, match="owner"):
        services.execution_request(by=other, agent=agent, release=registered, **WINDOW)
    with pytest.raises(SubmissionError, match="within the release"):
        services.execution_request(
            by=submitter, agent=agent, release=registered, **{**WINDOW, "end": date(2030, 1, 1)}
        )
    with pytest.raises(SubmissionError, match="forms not in the release"):
        services.execution_request(
            by=submitter, agent=agent, release=registered, **{**WINDOW, "forms": ["13F"]}
        )
    assert not ExecutionJob.objects.exists()
    # one execution of an agent at a time: a second waits for the first to end
    ExecutionJob.objects.create(
        kind="execute", agent=agent, release=registered, config={}, state=ExecutionState.CELLS
    )
    with pytest.raises(SubmissionError, match="one at a time") as busy:
        services.execution_request(by=submitter, agent=agent, release=registered, **WINDOW)
    assert busy.value.http_status == 409 and ExecutionJob.objects.count() == 1


def test_a_worker_without_isolation_ends_the_job_harness_error(
    registered: Any, submitter: User, staff: User, packages: Any, monkeypatch: Any
) -> None:
    from pitweb.execution import work

    monkeypatch.setattr(work, "availability", lambda: (False, "no user namespaces here"))
    agent = services.agent_register(
        by=staff, name="ref", owner=submitter, package="pit-stdio-python"
    )
    job = services.execution_request(by=submitter, agent=agent, release=registered, **WINDOW)
    job.refresh_from_db()
    assert job.state == ExecutionState.HARNESS_ERROR
    assert "isolation unavailable on this worker" in job.message
    assert job.made is None and not Run.objects.exists()


def test_the_api_registers_executes_shows_and_reexecutes(
    registered: Any, submitter: User, other: User, staff: User, packages: Any, site_release: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    from tests.pitweb.conftest import token_client

    require_sandbox()
    body = {"name": "ref", "owner": "alice", "package": "pit-stdio-python"}
    refused = token_client(submitter).post("/api/agents/", body, format="json")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "staff_only"
    made = token_client(staff).post("/api/agents/", body, format="json")
    assert made.status_code == 201, made.json()
    assert made.json()["digest"].startswith("sha256:") and made.json()["transport"] == "stdio"
    assert [a["name"] for a in token_client(submitter).get("/api/agents/").json()] == ["ref"]
    assert token_client(other).get("/api/agents/").json() == []
    assert Client().get("/api/agents/").status_code in (401, 403)
    ask = {"release": registered.content_digest, "start": "2023-03-01", "end": "2023-03-08",
           "forms": ["8-K"], "probe": 2}  # fmt: skip
    assert (
        token_client(other).post("/api/agents/ref/executions/", ask, format="json").status_code
        == 404
    )
    bad = token_client(submitter).post(
        "/api/agents/ref/executions/", {**ask, "end": "2031-01-01"}, format="json"
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_window"
    answer = token_client(submitter).post("/api/agents/ref/executions/", ask, format="json")
    assert answer.status_code == 202, answer.json()
    job_id = answer.json()["id"]
    shown = token_client(submitter).get(f"/api/executions/{job_id}/").json()
    assert shown["state"] == "executed" and len(shown["cells"]) == 9
    assert {c["state"] for c in shown["cells"]} == {"done"}
    # the made run is public: anyone may see the job that made it, workers by pseudonym
    public = Client().get(f"/api/executions/{job_id}/").json()
    assert public["made_run"] == shown["made_run"]
    assert all(c["worker"].startswith("worker-") for c in public["cells"])
    for missing in ("999999", "1e3", "²", "99999999999999999999999"):
        gone = Client().get(f"/api/executions/{missing}/")
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"
    sha = shown["made_run"].removeprefix("sha256:")
    again = token_client(submitter).post(
        f"/api/runs/{sha}/reexecute/", {"reason": "x"}, format="json"
    )
    assert again.status_code == 403
    again = token_client(staff).post(
        f"/api/runs/{sha}/reexecute/", {"reason": "check"}, format="json"
    )
    assert again.status_code == 202 and again.json()["kind"] == "reexecute"
    assert (
        token_client(staff).get(f"/api/executions/{again.json()['id']}/").json()["state"]
        == "reproduced"
    )
    schema = Client().get("/api/schema/").content.decode()
    for path in ("/api/agents/", "/api/agents/{name}/executions/", "/api/executions/{job_id}/",
                 "/api/runs/{sha}/reexecute/"):  # fmt: skip
        assert path in schema, path


def test_an_owner_declares_the_model_and_cutoff_the_run_is_checked_against(
    registered: Any, submitter: User, staff: User, packages: Any
) -> None:
    from tests.pitweb.conftest import token_client

    require_sandbox()
    services.agent_register(by=staff, name="ref", owner=submitter, package="pit-stdio-python")
    ask = {"release": registered.content_digest, "start": "2023-03-01", "end": "2023-03-08",
           "forms": ["8-K"], "probe": 2}  # fmt: skip
    for cutoff in ("2023-13-01", "yesterday"):
        bad = token_client(submitter).post(
            "/api/agents/ref/executions/", {**ask, "training_cutoff": cutoff}, format="json"
        )
        assert bad.status_code == 400, bad.json()
    long = token_client(submitter).post(
        "/api/agents/ref/executions/", {**ask, "model_version": "m" * 201}, format="json"
    )
    assert long.status_code == 400
    assert not ExecutionJob.objects.exists()  # refused: nothing queued
    declared = {**ask, "model_version": "demo-model-1", "training_cutoff": "2023-03-03"}
    answer = token_client(submitter).post("/api/agents/ref/executions/", declared, format="json")
    assert answer.status_code == 202, answer.json()
    run = ExecutionJob.objects.get().made
    assert run is not None
    config, protocol = run.body["config"], run.body["protocol"]
    assert (config["model_version"], config["training_cutoff"]) == ("demo-model-1", "2023-03-03")
    assert protocol["P2_training_cutoffs"]["check"] == "window_crosses_cutoff"
    assert "P1_model_version" not in run.body["protocol_gaps"]


def test_a_private_runs_reexecution_is_hidden_like_the_run(
    registered: Any, submitter: User, other: User, staff: User, packages: Any, site_release: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    uploaded = _reference_upload(staff, submitter, submitter, site_release, tmp_path)
    Run.objects.filter(pk=uploaded.pk).update(visibility="private")
    job = services.reexecution_request(by=staff, run=uploaded, reason="private check")
    client = Client()
    assert client.get(f"/executions/{job.pk}/").status_code == 404
    client.force_login(other)
    assert client.get(f"/executions/{job.pk}/").status_code == 404
    client.force_login(submitter)  # the run's submitter and the agent's owner
    assert client.get(f"/executions/{job.pk}/").status_code == 200


def test_a_changed_package_proves_nothing_and_takes_the_level_back(
    registered: Any, submitter: User, staff: User, packages: Any, site_release: Path,
    tmp_path: Path, settings: Any,
) -> None:  # fmt: skip
    """Reproduced once (level reexecuted); then the workers' copy of the package changes
    (same file name, other bytes): the next re-execution runs another agent, so it is
    reexecution_failed whatever it decided, and the run's level goes back."""
    uploaded = _reference_upload(staff, submitter, submitter, site_release, tmp_path)
    first = services.reexecution_request(by=staff, run=uploaded, reason="first")
    first.refresh_from_db()
    uploaded.refresh_from_db()
    assert first.state == ExecutionState.REPRODUCED
    assert uploaded.verification_level == VerificationLevel.REEXECUTED
    changed = tmp_path / "changed" / "pit_stdio.py"
    changed.parent.mkdir()
    changed.write_text((EXAMPLES / "pit_stdio.py").read_text() + "\n# changed\n")
    settings.PITWEB_AGENT_PACKAGES = {
        **packages,
        "pit-stdio-python": {"argv": ["python3", str(changed)], "dialect": "pit"},
    }
    second = services.reexecution_request(by=staff, run=uploaded, reason="second")
    second.refresh_from_db()
    assert second.state == ExecutionState.FAILED
    assert "digest differs" in second.comparison["failure"]
    uploaded.refresh_from_db()
    assert uploaded.verification_level == VerificationLevel.HASHES_VERIFIED


def test_only_a_verified_run_of_the_agents_dialect_is_reexecuted(
    registered: Any, submitter: User, staff: User, packages: Any, site_release: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    uploaded = _reference_upload(staff, submitter, submitter, site_release, tmp_path)
    Run.objects.filter(pk=uploaded.pk).update(status=JobState.MISMATCH)
    uploaded.refresh_from_db()
    with pytest.raises(SubmissionError, match="verified") as refused:
        services.reexecution_request(by=staff, run=uploaded, reason="x")
    assert refused.value.http_status == 409 and not ExecutionJob.objects.exists()


def _job_with_cells(agent: RegisteredAgent, release: Any, states: list[str]) -> ExecutionJob:
    job = ExecutionJob.objects.create(
        kind="execute", agent=agent, release=release, config={}, state=ExecutionState.CELLS
    )
    for n, state in enumerate(states):
        ExecutionCell.objects.create(job=job, position=n, arm="main", clock=f"c{n}", state=state)
    return job


def test_a_stale_workers_failure_report_changes_nothing(
    registered: Any, submitter: User, staff: User, packages: Any
) -> None:
    agent = services.agent_register(by=staff, name="ref", owner=submitter, package="dice")
    job = _job_with_cells(agent, registered, ["queued", "queued"])
    cell = job.cells.first()
    assert cell is not None
    from pitweb.jobs import machine

    assert machine.claim(ExecutionCell, pk=cell.pk, worker="a")
    # the sweep hands the silent cell on, and worker b takes it
    assert machine.release(ExecutionCell, pk=cell.pk, worker="a", message="requeued")
    assert machine.claim(ExecutionCell, pk=cell.pk, worker="b")
    for retry in (True, False):  # a, who no longer holds it, reports a failure late
        assert (
            services.cell_failed(cell_id=cell.pk, worker="a", message="late", retry=retry) is None
        )
    job.refresh_from_db()
    cell.refresh_from_db()
    assert job.state == ExecutionState.CELLS and cell.state == "running" and cell.worker == "b"
    # b cannot isolate the agent: the cell ends, and its job, and the cell still queued
    services.cell_failed(cell_id=cell.pk, worker="b", message="isolation unavailable", retry=False)
    job.refresh_from_db()
    assert job.state == ExecutionState.HARNESS_ERROR
    assert set(job.cells.values_list("state", flat=True)) == {"harness_error"}


def test_the_sweep_moves_on_a_set_whose_last_worker_died_before_moving_it(
    registered: Any, submitter: User, staff: User, packages: Any, monkeypatch: Any
) -> None:
    agent = services.agent_register(by=staff, name="ref", owner=submitter, package="dice")
    done = _job_with_cells(agent, registered, ["done", "done"])
    failed = _job_with_cells(agent, registered, ["done", "harness_error"])
    sent: list[int] = []
    monkeypatch.setattr(services, "enqueue_assembly", sent.append)
    from datetime import timedelta

    services.execution_requeue_stale(older_than=timedelta(seconds=-1))
    done.refresh_from_db()
    failed.refresh_from_db()
    assert done.state == ExecutionState.QUEUED and sent == [done.pk]
    assert failed.state == ExecutionState.HARNESS_ERROR


def test_an_agents_owner_does_not_see_the_reexecution_of_anothers_private_run(
    registered: Any, submitter: User, other: User, staff: User, packages: Any,
    site_release: Path, tmp_path: Path,
) -> None:  # fmt: skip
    uploaded = _reference_upload(staff, other, submitter, site_release, tmp_path)
    Run.objects.filter(pk=uploaded.pk).update(visibility="private")
    job = services.reexecution_request(by=staff, run=uploaded, reason="private")
    client = Client()
    client.force_login(other)  # owns the agent, not the run
    assert client.get(f"/executions/{job.pk}/").status_code == 404
    assert str(job.pk) not in client.get("/agents/").content.decode().split("executions")[-1]


def test_a_divergence_in_a_cells_facts_is_shown_by_its_field(
    registered: Any, submitter: User, staff: User, packages: Any
) -> None:
    """A re-execution that decided alike but made an egress attempt the recorded run does
    not record is shown parting at that cell's field (there is no step)."""
    from harness.runs.reexecute import Reexecution, ReexecutionDivergence

    divergence = ReexecutionDivergence(
        "main/leaky", None, None, {"count": 0, "destinations": []},
        {"count": 1, "destinations": ["example.com:80"]}, field="egress_attempts",
    )  # fmt: skip
    comparison = Reexecution("diverged", steps_compared=8, divergence=divergence).to_json()
    agent = services.agent_register(by=staff, name="ref", owner=submitter, package="dice")
    job = ExecutionJob.objects.create(
        kind="execute", agent=agent, release=registered, config={},
        state=ExecutionState.DIVERGED, comparison=comparison,
    )  # fmt: skip
    client = Client()
    client.force_login(submitter)
    page = client.get(f"/executions/{job.pk}/").content.decode()
    assert "Where they part: main/leaky, egress_attempts</h3>" in page
    assert "step None" not in page
    assert "example.com:80" in page


def test_a_divergence_in_the_runs_validity_shows_both_values() -> None:
    from pitweb.execution.selectors import side_by_side

    divergence = {"cell": "run", "step": None, "session": None, "field": "valid",
                  "recorded": True, "reexecuted": False}  # fmt: skip
    assert side_by_side({"divergence": divergence}) == [
        {"field": "valid", "recorded": "true", "reexecuted": "false", "differs": True}
    ]


def test_cell_records_move_into_storage_and_back_with_the_migration(
    registered: Any, submitter: User, staff: User, packages: Any
) -> None:
    from django.core.management import call_command
    from django.db import connection

    agent = services.agent_register(by=staff, name="ref", owner=submitter, package="dice")
    job = _job_with_cells(agent, registered, ["queued", "queued"])
    first, second = job.cells.all()
    assert machine_claim(first.pk, "a")
    record = b'{"arm": "main", "clock": "c0", "outcome": {"status": "complete"}}'
    services.cell_done(cell_id=first.pk, worker="a", record=record, status="complete", sessions=3)
    first.refresh_from_db()
    assert first.record_sha256 == "sha256:" + hashlib.sha256(record).hexdigest()
    table = ExecutionCell._meta.db_table
    try:
        # back to records kept in their rows: read out of storage into the row
        call_command("migrate", "execution", "0001", verbosity=0)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id, record FROM {table} ORDER BY position")
            assert cursor.fetchall() == [(first.pk, record.decode()), (second.pk, "")]
        default_storage.delete(first.record_name)
    finally:  # and forward again: into storage, the row keeping the digest
        call_command("migrate", "execution", verbosity=0)
    first.refresh_from_db()
    assert first.record_sha256 == "sha256:" + hashlib.sha256(record).hexdigest()
    with default_storage.open(first.record_name, "rb") as stored:
        assert stored.read() == record


def machine_claim(cell_id: int, worker: str) -> bool:
    from pitweb.jobs import machine

    return machine.claim(ExecutionCell, pk=cell_id, worker=worker)
