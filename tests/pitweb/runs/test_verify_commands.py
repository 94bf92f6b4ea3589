"""What the run page's verify-it-yourself block says in the cases its live test does not
run: a price source written to break a shell, a private run, a release without
reference prices."""

from __future__ import annotations

import html
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from pitweb.pricing.services import reference_prices_register
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run
from tests.support.data import build_prices

pytestmark = pytest.mark.django_db


def block(run: Run, client: Client | None = None) -> tuple[list[str], str]:
    sha = run.body_sha256.removeprefix("sha256:")
    page = (client or Client()).get(f"/runs/{sha}/?submission={run.pk}").content.decode()
    found = re.search(r'<pre id="verify-commands"[^>]*>(.*?)</pre>', page, re.S)
    assert found is not None
    return html.unescape(found[1]).splitlines(), page


def submitted(user: User, artifacts: Artifacts, capture: Any) -> Run:
    with capture(execute=True):
        run: Run = submit_run(user, artifacts)
    run.refresh_from_db()
    return run


def test_a_price_source_written_to_break_a_shell_stays_one_quoted_word(
    priced_release: Any,
    site_release: Path,
    tmp_path: Path,
    submitter: User,
    stub_run: Artifacts,
    django_capture_on_commit_callbacks: Any,
) -> None:
    source = "x'; touch pwned; echo '$(id) `id` \"q\""
    reference_prices_register(
        release=priced_release,
        path=build_prices(tmp_path / "v2.csv", site_release, seed=77),
        source=source,
        pulled_at="now; rm -rf ~",
        staff=None,
        reason="hostile words",
    )
    run = submitted(submitter, stub_run, django_capture_on_commit_callbacks)
    lines, _ = block(run)
    (rescore,) = [line for line in lines if line.startswith("pit-harness rescore ")]
    words = shlex.split(rescore)
    assert words[words.index("--source") + 1] == source
    assert words[words.index("--pulled-at") + 1] == "now; rm -rf ~"
    assert words[words.index("--prices") + 1] == "reference-prices-v2.csv"


def test_a_private_run_says_its_downloads_need_a_signed_in_session(
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    django_capture_on_commit_callbacks: Any,
) -> None:
    run = submitted(submitter, stub_run, django_capture_on_commit_callbacks)
    client = Client()
    client.force_login(submitter)
    assert "this run is not public" not in block(run, client)[1]
    Run.objects.filter(pk=run.pk).update(visibility="private")
    assert "this run is not public" in block(run, client)[1]


def test_a_release_without_reference_prices_has_no_rescore_and_says_why(
    registered: Any, submitter: User, stub_run: Artifacts, django_capture_on_commit_callbacks: Any
) -> None:
    run = submitted(submitter, stub_run, django_capture_on_commit_callbacks)
    lines, page = block(run)
    assert not any(line.startswith("pit-harness rescore") for line in lines)
    assert any(line.startswith("pit-harness verify ") for line in lines)
    assert "has no reference prices yet" in page
