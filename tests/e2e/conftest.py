"""Browser tests: Playwright driving Debian's Chromium against a live server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.pitweb.conftest import (  # noqa: F401 - fixtures shared with the site tests
    artifact_dir,
    board_at_once,
    eager_celery,
    fresh_cache,
    longer_window_run,
    memory_cheat_run,
    other,
    picky_run,
    priced_release,
    private_storage,
    reference_file,
    registered,
    short_hold_run,
    site_prices,
    site_release,
    staff,
    stub_run,
    submitter,
)

CHROMIUM = os.environ.get("PITWEB_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="session", autouse=True)
def sync_orm_beside_playwright() -> Iterator[None]:
    """Playwright's sync API runs an event loop in this thread; the ORM calls the tests
    make between page actions are still plain synchronous calls. Set before the browser
    starts, removed when the session ends (subprocess checks strip it too)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="session")
def browser(sync_orm_beside_playwright: None) -> Iterator[Any]:
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: apt-get install chromium (the CI script does)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.console_errors = []  # type: ignore[attr-defined]
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    yield page
    context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(autouse=True)
def real_worker(
    eager_celery: None,  # noqa: F811
    artifact_dir: Path,  # noqa: F811
    tmp_path: Path,
    settings: Any,
) -> Iterator[None]:
    """Browser tests see the site as it runs: uploads are verified and priced, and the
    stored board computed, by a real Celery worker process on the real broker, never
    eagerly in the test's process. The small test runs rank from one priced trade, in
    the worker as in the served site."""
    from pitweb import celery_app
    from tests.pitweb.jobs.test_worker_integration import (
        real_broker_clean,
        stop,
        worker,
        worker_env,
    )

    settings.PITWEB_MIN_RANKED_TRADES = 1
    celery_app.conf.task_always_eager = False
    real_broker_clean()
    env = {**worker_env(artifact_dir), "PITWEB_MIN_RANKED_TRADES": "1"}
    process = worker(env, tmp_path / "worker.log", "browser")
    yield
    stop(process)


def settled(timeout: float = 90.0) -> None:
    """Wait until every verification job and platform score has finished, and the worker
    has computed every stored board past the last change (a page served before that
    shows the stored board as it stood: the worker's refresh runs after the job that
    changed the board, not inside it; a benchmark's board comes after the whole one)."""
    import time

    from pitweb.board.filters import board_key
    from pitweb.board.models import StoredBoard
    from pitweb.board.stamp import board_version
    from pitweb.pricing.models import PlatformScore
    from pitweb.runs.models import FINAL_STATES, VerificationJob

    def board_behind() -> bool:
        """The whole public board, or any stored board (each benchmark's: the worker
        computes them after the whole board), not yet computed past the last change."""
        version = board_version()
        return version > 0 and (
            not StoredBoard.objects.filter(key=board_key({}), built_version__gte=version).exists()
            or StoredBoard.objects.filter(built_version__lt=version).exists()
        )

    deadline = time.monotonic() + timeout
    while (
        VerificationJob.objects.exclude(state__in=FINAL_STATES).exists()
        or PlatformScore.objects.filter(state__in=("pending", "scoring")).exists()
        or board_behind()
    ):
        if time.monotonic() > deadline:
            raise AssertionError("jobs did not finish: is the worker running?")
        time.sleep(0.1)
