"""The README's submit path (``pit-harness submit``) and docs/site.md's raw upload
(curl), run as written against a site this test starts (its release registered, a token
issued), and docs/site.md's staff commands, run as written from a shell that has not set
DJANGO_DEBUG. Which blocks no test runs, and why, is listed in tests/harness/test_readme.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts
from tests.support.readme import (
    DOCS,
    README,
    REPO,
    matches_in_order,
    run_block,
    runnable_blocks,
)

DOCS_SITE = REPO / "docs" / "site.md"

pytestmark = pytest.mark.django_db(transaction=True)


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


def test_the_raw_upload_in_docs_works_as_written(
    live_server: Any, registered: Any, submitter: User, stub_run: Artifacts, tmp_path: Path
) -> None:
    """docs/site.md's curl upload, in a folder laid out as the README's walk-through
    leaves it."""
    from pitweb.accounts.services import token_issue

    [(code, expected)] = runnable_blocks(DOCS_SITE.read_text(), "<!-- runnable-site:")
    assert stub_run.prices is not None
    (tmp_path / "out").mkdir()
    for source, target in (
        (stub_run.receipt, "out/receipt.json"),
        (stub_run.trajectory, "out/trajectory.jsonl"),
        (stub_run.prices, "prices.csv"),
    ):
        (tmp_path / target).write_bytes(source.read_bytes())
    done = run_block(
        code, tmp_path, PITWEB_URL=live_server.url, PITWEB_TOKEN=token_issue(user=submitter)
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    missing = matches_in_order(done.stdout, expected or "")
    assert missing is None, f"docs/site.md shows {missing!r}; the block printed:\n{done.stdout}"
    [run] = Run.objects.filter(submitter=submitter)
    job = run.jobs.get()
    assert f"/runs/{run.body_sha256[7:]}/?submission={run.pk} /api/jobs/{job.pk}/" in done.stdout


def _database_url() -> str:
    """The URL of the database this test writes, for a process of its own."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def test_the_staff_commands_work_as_written_in_a_fresh_shell(
    site_release: Path, tmp_path: Path
) -> None:
    from pitweb.accounts.models import ApiToken
    from pitweb.releases.models import ReferencePrices, Release

    User.objects.create_user("staff", password="staff-demo-password", is_staff=True)  # the demo's
    blocks = [b for doc in DOCS for b in runnable_blocks(doc.read_text(), "<!-- runnable-staff:")]
    [(code, expected)] = blocks
    (tmp_path / "manage.py").symlink_to(REPO / "manage.py")
    done = run_block(
        code,
        tmp_path,
        drop=("DJANGO_DEBUG", "DJANGO_SECRET_KEY", "DJANGO_SETTINGS_MODULE"),
        DATABASE_URL=_database_url(),
        PITWEB_VAR_DIR=str(tmp_path / "var"),
        PITWEB_RELEASE=str(site_release),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    missing = matches_in_order(done.stdout, expected or "")
    assert missing is None, f"docs/site.md shows {missing!r}; the block printed:\n{done.stdout}"
    [release] = Release.objects.all()
    [reference] = ReferencePrices.objects.filter(release=release)
    assert reference.version == 1 and reference.registered_by.username == "staff"
    assert ApiToken.objects.filter(user__username="alice").count() == 1
