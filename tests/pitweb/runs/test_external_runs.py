"""Runs of external agents on the site: a sharpebench-dialect command's receipt and an HTTP
agent's are read, verified and shown for what they are (its probe not applicable; a remote
agent never counted as isolated)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.agents.external import command_agent, http_agent
from pitweb.runs.models import JobState
from tests.pitweb.conftest import make_run, submit_run
from tests.support.http_agents import serving_first_two

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "agents"

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_sharpebench_command_run_is_verified_and_its_probe_is_not_applicable(
    registered: Any, submitter: User, site_release: Path, site_prices: Path, tmp_path: Path
) -> None:
    agent = command_agent([sys.executable, str(EXAMPLES / "sharpebench_stdio.py")],
                          dialect="sharpebench")  # fmt: skip
    artifacts = make_run(
        site_release, tmp_path, site_prices, agent=agent, agent_cmd="x", dialect="sharpebench",
        agent_process="in_process",
    )  # fmt: skip
    run = submit_run(submitter, artifacts)
    job = run.jobs.get()
    assert job.state == JobState.VERIFIED, (job.mismatch_check, job.message)
    assert run.mask_verdict == "not_applicable"
    assert run.receipt.config.agent_dialect == "sharpebench"
    page = Client().get(f"/runs/{run.run_id}/", follow=True).content.decode()
    assert "stdio:" in page and "sharpebench_stdio.py" in page
    assert "not_applicable" in page


def test_an_http_agents_run_is_verified_and_never_counted_isolated(
    registered: Any, submitter: User, site_release: Path, site_prices: Path, tmp_path: Path
) -> None:
    with serving_first_two() as url:
        artifacts = make_run(
            site_release, tmp_path, site_prices, agent=http_agent(url), agent_http=url
        )
    run = submit_run(submitter, artifacts)
    assert run.jobs.get().state == JobState.VERIFIED
    assert run.receipt.capabilities.agent_process == "remote"
    assert run.agent_isolated is False
