"""Executions in a real browser, run by the real worker: staff register an installed
agent package from the agents page, ask for its run, and watch the execution page fill
cell by cell; an upload of a dice-rolling agent re-executed from its run page shows where
the two part, side by side, on a desktop and on a phone."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.execution.models import ExecutionJob
from tests.e2e.conftest import settled
from tests.e2e.test_site import PHONE
from tests.pitweb.conftest import submit_run
from tests.pitweb.execution.test_execution import RANDOM_AGENT, _cli_run
from tests.support.sandbox import require_sandbox

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def real_worker(
    eager_celery: None, artifact_dir: Path, tmp_path: Path, settings: Any
) -> Iterator[None]:
    """The conftest's real worker, started with the packages this test installs (the
    reference agent and the dice agent) in its environment and the site's settings."""
    from pitweb import celery_app
    from tests.pitweb.jobs.test_worker_integration import (
        real_broker_clean,
        stop,
        worker,
        worker_env,
    )

    dice = tmp_path / "dice_agent.py"
    dice.write_text(RANDOM_AGENT)
    packages = {
        "pit-stdio-python": {"argv": ["python3", "{examples}/agents/pit_stdio.py"], "dialect": "pit",
                             "about": "the reference agent in our dialect"},
        "dice": {"argv": ["python3", str(dice)], "dialect": "pit", "about": "rolls dice"},
    }  # fmt: skip
    listed = tmp_path / "packages.json"
    listed.write_text(json.dumps(packages))
    settings.PITWEB_AGENT_PACKAGES = packages
    celery_app.conf.task_always_eager = False
    real_broker_clean()
    env = {**worker_env(artifact_dir), "PITWEB_AGENT_PACKAGES_FILE": str(listed)}
    process = worker(env, tmp_path / "worker.log", "browser")
    yield
    stop(process)


def _log_in(page: Any, live_server: Any, to: str) -> None:
    page.goto(live_server.url + "/admin/login/?next=" + to)
    page.fill("#id_username", "carol")
    page.fill("#id_password", "pw-carol")
    page.click("input[type=submit]")


def _finished(job: ExecutionJob, timeout: float = 240.0) -> ExecutionJob:
    deadline = time.monotonic() + timeout
    while not (job.refresh_from_db() or job.is_final):
        assert time.monotonic() < deadline, f"execution {job.pk} still {job.state}"
        time.sleep(0.2)
    return job


def test_staff_register_an_agent_it_is_executed_and_a_dice_upload_parts_side_by_side(
    live_server: Any, page: Any, registered: Any, submitter: User, staff: User,
    site_release: Path, screenshots: Path, tmp_path: Path,
) -> None:  # fmt: skip
    require_sandbox()
    _log_in(page, live_server, "/agents/")
    page.wait_for_url("**/agents/")
    form = page.locator("#register-form")
    form.get_by_label("name").fill("reference")
    form.get_by_label("owner").select_option("alice")
    form.get_by_label("installed package").select_option("pit-stdio-python")
    form.locator("button").click()
    page.wait_for_selector("#agents >> text=reference")
    execute = page.locator("#execute-form")
    execute.get_by_label("start").fill("2023-03-01")
    execute.get_by_label("end").fill("2023-03-08")
    execute.get_by_label("forms").fill("8-K")
    execute.locator("button").click()
    page.wait_for_url("**/executions/*/")
    job = _finished(ExecutionJob.objects.get())
    assert job.state == "executed", job.message
    page.reload()
    cells = page.locator("#cells tbody tr")
    assert cells.count() == 9 and page.locator("#cells").inner_text().count("complete") == 9
    page.screenshot(path=str(screenshots / "execution.png"), full_page=True)
    page.click(f"text=run {job.made.run_id}")  # type: ignore[union-attr]
    page.wait_for_selector("#execution-jobs")
    assert "measured: executed by this site" in page.content()
    page.screenshot(path=str(screenshots / "executed-run.png"), full_page=True)

    # a dice agent's upload, re-executed from its run page by staff
    page.goto(live_server.url + "/agents/")
    form = page.locator("#register-form")
    form.get_by_label("name").fill("dice")
    form.get_by_label("owner").select_option("alice")
    form.get_by_label("installed package").select_option("dice")
    form.locator("button").click()
    page.wait_for_selector("#agents >> text=dice")
    argv = ["python3", str(tmp_path / "dice_agent.py")]
    run = submit_run(submitter, _cli_run(site_release, tmp_path / "dice", None, argv))
    settled()
    page.goto(live_server.url + f"/runs/{run.body_sha256[7:]}/")
    reexecute = page.locator("#reexecute-form")
    reexecute.get_by_label("Reason for re-executing").fill("does it decide the same again?")
    reexecute.get_by_label("I confirm").check()
    reexecute.locator("button").click()
    page.wait_for_selector("text=Re-execution queued as execution")
    checked = _finished(ExecutionJob.objects.get(kind="reexecute"))
    assert checked.state == "diverged"
    page.reload()
    page.click("#execution-jobs >> text=main/leaky step 1")
    page.wait_for_selector("#side-by-side")
    table = page.locator("#side-by-side").inner_text()
    divergence = checked.comparison["divergence"]  # type: ignore[index]
    for side in ("recorded", "reexecuted"):
        assert divergence[side]["rejected"][0]["row_key"] in table
    page.screenshot(path=str(screenshots / "divergence.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.reload()
    page.screenshot(path=str(screenshots / "divergence-phone.png"), full_page=True)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    assert page.console_errors == []
    assert os.environ.get("PITWEB_AGENT_PACKAGES_FILE") is None  # only the worker's
