"""The README's submit path, run as written against a site this test starts (its
release registered, a token issued), and every README block that is not run, with why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.runs.models import Run
from tests.harness.test_readme import (
    README,
    fenced_blocks,
    matches_in_order,
    run_block,
    runnable_blocks,
)
from tests.pitweb.conftest import Artifacts

pytestmark = pytest.mark.django_db(transaction=True)

# Every fenced block of the README that no test runs, by its first line, and why.
NOT_RUN = {
    "make demo    # set up": "the two commands themselves: CI runs `make test`; "
    "`make demo` serves until stopped (its seeding is tested by test_demo_seed)",
    "from pit_harness import Bundle": "the seed's Python example: tests/harness/test_readme.py "
    "runs it verbatim from the seed file (test_the_seed_example_runs_in_isolation)",
    "clocks-report ": "sample output of a command, not a command",
    '{"bundle_path": "release"': "a sample run config, shown for its keys",
    '"capabilities": {': "an excerpt of a receipt, not a command",
    "python manage.py register_prices": "a staff command on a deployed site; "
    "test_platform_figures runs register_prices",
    "cp .env.example .env": "needs a Docker engine; test_deploy checks the compose file, "
    "the proxy configuration and the image's runtime instead",
    "pit-harness points validate": "run on the real points by tests/harness/test_points.py "
    "(validate, render, show)",
}


def test_every_readme_block_is_run_or_says_why_not() -> None:
    text = README.read_text()
    for before, first in fenced_blocks(text):
        if before.startswith(("<!-- runnable", "<!-- output")):
            continue
        assert any(first.startswith(key) for key in NOT_RUN), (
            f"README block {first!r} is neither marked runnable nor listed in NOT_RUN"
        )
    firsts = [first for _, first in fenced_blocks(text)]
    for key in NOT_RUN:
        assert any(f.startswith(key) for f in firsts), f"NOT_RUN lists {key!r}: no such block"


def test_the_readme_submit_path_works_as_written(
    live_server: Any,
    registered: Any,
    site_release: Path,
    submitter: User,
    stub_run: Artifacts,
    tmp_path: Path,
) -> None:
    from pitweb.accounts.services import token_issue

    [(code, expected)] = runnable_blocks(README.read_text(), "<!-- runnable-site:")
    done = run_block(
        code,
        tmp_path,
        # as `make demo` prints them
        PITWEB_URL=live_server.url,
        PITWEB_TOKEN=token_issue(user=submitter),
        PITWEB_RELEASE=str(site_release),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    missing = matches_in_order(done.stdout, expected or "")
    assert missing is None, f"the README shows {missing!r}; the block printed:\n{done.stdout}"
    [run] = Run.objects.filter(submitter=submitter)
    assert run.status == "verified"
    assert f"/runs/{run.body_sha256[7:]}/?submission={run.pk}" in done.stdout
