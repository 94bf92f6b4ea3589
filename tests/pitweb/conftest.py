"""Site fixtures: a small registered release, honest runs made by the harness, users."""

from __future__ import annotations

import io
import shlex
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from celery.result import allow_join_result
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from harness import RunConfig, run
from harness.agents import memory_cheat, stub
from harness.agents.adapters.plain import from_callable
from harness.agents.external import command_agent
from harness.attest.keys import private_key_pem
from harness.market.prices import load_prices
from pitweb import celery_app
from tests.support.data import build_prices, build_release

# the judged-point fixtures (a four-point set, the chat server)
from tests.support.points_site import chat, point_set  # noqa: F401


@dataclass(frozen=True)
class Artifacts:
    receipt: Path
    trajectory: Path
    prices: Path | None

    def files(self, **replace: bytes | None) -> dict[str, Any]:
        data = {"receipt": self.receipt.read_bytes(), "trajectory": self.trajectory.read_bytes()}
        if self.prices is not None:
            data["prices"] = self.prices.read_bytes()
        data.update(replace)
        return {
            name: _named(name, content) for name, content in data.items() if content is not None
        }


def _named(name: str, content: bytes) -> io.BytesIO:
    handle = io.BytesIO(content)
    handle.name = f"{name}.bin"
    return handle


@pytest.fixture(scope="session")
def site_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_release(
        tmp_path_factory.mktemp("site") / "release", end=date(2023, 3, 20), seed=21, rows=3000
    )


@pytest.fixture(scope="session")
def site_prices(tmp_path_factory: pytest.TempPathFactory, site_release: Path) -> Path:
    return build_prices(
        tmp_path_factory.mktemp("site-prices") / "prices-SYNTHETIC.csv", site_release, seed=3
    )


def make_run(
    release: Path, out: Path, prices: Path | None = None, agent: Any = None, **extra: Any
) -> Artifacts:
    config: dict[str, Any] = {
        "bundle_path": str(release),
        "forms": ("8-K",),
        "start": "2023-03-01",
        "end": "2023-03-08",
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
    }
    if prices is not None:
        config["prices"] = {
            "path": str(prices),
            "source": "SYNTHETIC test prices",
            "pulled_at": "generated",
        }
    config.update(extra)
    run(agent or stub(), RunConfig(**config))
    return Artifacts(out / "receipt.json", out / "trajectory.jsonl", prices)


def exiting_agent(
    monkeypatch: pytest.MonkeyPatch, cell: tuple[str, str], times: int | None, name: str
) -> Any:
    """An agent whose process exits in ``cell``: in its first ``times`` attempts there, or in
    every one (None). Elsewhere it buys the first two knowable rows of each session."""
    from harness.tools.toolbox import Toolbox

    original = Toolbox.pit_coverage
    told: list[str] = []

    def tell(self: Toolbox) -> dict[str, Any]:
        result = original(self)
        if (self.arm, self.clock) == cell and (times is None or len(told) < times):
            told.append(self.session_date)
            return {**result, "crash_now": True}
        return result

    def agent(prompt: str, tools: Any) -> list[str]:
        import os

        if tools.pit_coverage().get("crash_now"):
            os._exit(3)  # the agent's process exits: retried from the cell's first step
        return [r["row_key"] for r in tools.pit_list(limit=2)["rows"]]

    monkeypatch.setattr(Toolbox, "pit_coverage", tell)
    return from_callable(agent, name=name)


@pytest.fixture(scope="session")
def stub_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    return make_run(site_release, tmp_path_factory.mktemp("stub-run"), site_prices)


@pytest.fixture(scope="session")
def longer_window_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """The stub agent over 2023-03-01..03-10: the same release and forms as ``stub_run``,
    another window, so another benchmark."""
    return make_run(
        site_release, tmp_path_factory.mktemp("longer-run"), site_prices, end="2023-03-10"
    )


@pytest.fixture(scope="session")
def short_hold_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """The stub agent over ``stub_run``'s window, holding 3 sessions: another benchmark."""
    return make_run(
        site_release, tmp_path_factory.mktemp("short-hold-run"), site_prices, hold_sessions=3
    )


@pytest.fixture(scope="session")
def picky_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """A second agent (first five new filings each session), declared model and cutoff."""

    def first_five(prompt: str, tools: Any) -> list[str]:
        return [r["row_key"] for r in tools.pit_list(limit=5)["rows"]]

    return make_run(
        site_release,
        tmp_path_factory.mktemp("picky-run"),
        site_prices,
        agent=from_callable(first_five, name="first-five"),
        model_version="demo-1",
        training_cutoff="2022-12-31",
    )


@pytest.fixture(scope="session")
def crossing_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """The stub agent over ``stub_run``'s benchmark, declaring a model whose training
    cutoff falls inside the window (2023-03-01..03-08)."""
    return make_run(
        site_release, tmp_path_factory.mktemp("crossing-run"), site_prices,
        model_version="demo-crossing", training_cutoff="2023-03-03",
    )  # fmt: skip


@pytest.fixture(scope="session")
def pre_cutoff_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """The stub agent over ``stub_run``'s benchmark, declaring a model whose training
    cutoff is the window's last day: the window is inside its training data."""
    return make_run(
        site_release, tmp_path_factory.mktemp("pre-cutoff-run"), site_prices,
        model_version="demo-trained-on-it", training_cutoff="2023-03-08",
    )  # fmt: skip


@pytest.fixture()
def registered(db: None, site_release: Path) -> Any:
    from pitweb.releases.services import release_register

    return release_register(path=site_release)[0]


@pytest.fixture()
def artifact_dir(tmp_path: Path) -> Path:
    return tmp_path / "artifacts"


@pytest.fixture(autouse=True)
def private_storage(settings: Any, artifact_dir: Path) -> None:
    """Artifacts of a test session go to a temporary folder, never the checkout."""
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(artifact_dir)},
        },
    }


@pytest.fixture(autouse=True)
def fresh_cache(request: pytest.FixtureRequest) -> None:
    """Cached boards are keyed by a version that restarts with each test database, and
    the cache (Redis, or a table) outlives a test: every test that touches the database
    starts with an empty one."""
    from django.core.cache import cache

    uses_db = request.node.get_closest_marker("django_db") is not None or bool(
        {"db", "transactional_db", "live_server"} & set(request.fixturenames)
    )
    if not uses_db:
        return
    from pitweb.board.stamp import forget_stamp
    from pitweb.cache import near

    request.getfixturevalue("db")
    cache.clear()
    near.clear()  # the process's copies too, whatever the cache's backend
    forget_stamp()  # and its reading of the board's stamp, from the database before


@pytest.fixture(autouse=True)
def board_at_once(settings: Any) -> None:
    """A test reads the board right after changing it, with no worker to compute it: the
    visitor computes a stale stored board at once and renders it again at once
    (tests/pitweb/board/test_board_store.py tries the grace and the render interval of
    production)."""
    settings.PITWEB_BOARD_STALE_SECONDS = 0
    settings.PITWEB_BOARD_RENDER_MS = 0  # and renders a page again at once
    settings.PITWEB_BOARD_STAMP_MS = 0  # and reads the board's stamp on every request


@pytest.fixture(autouse=True)
def quick_passwords(settings: Any) -> None:
    """Passwords hashed in one round, not the site's million (half a second of CPU each,
    and the tests make and check hundreds): what a password opens and refuses is the same
    (tests/pitweb/test_settings.py holds the site's own hasher)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def eager_celery() -> Any:
    """Tasks run in the test's process, at once. Celery marks "inside a task" around each
    eager task in one flag for the whole process, saved and restored: two threads running
    eager tasks at once (a live server's and the test's) can restore it in the wrong order
    and leave it set, and every later ``result.get()`` then refuses as if called from a
    task. No worker runs inside the test process, so each test starts with it clear."""
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True
    with allow_join_result():
        yield
    celery_app.conf.task_always_eager = False


SITE_KEY_VALID_FROM = "2020-01-01T00:00:00Z"


@pytest.fixture(scope="session")
def site_key_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Ed25519PrivateKey]:
    key = Ed25519PrivateKey.generate()
    path = tmp_path_factory.mktemp("signing") / "site-key.pem"
    path.write_bytes(private_key_pem(key))
    return path, key


@pytest.fixture(autouse=True)
def site_key(settings: Any, site_key_file: tuple[Path, Ed25519PrivateKey]) -> Any:
    """The site signs with a key of the tests' own, valid from 2020 (none is made under
    the checkout's var/ on first use), and reads it again in each test."""
    from pitweb.core import signing

    path, key = site_key_file
    settings.PITWEB_SIGNING_KEY_FILE = str(path)
    settings.PITWEB_SIGNING_KEY_VALID_FROM = SITE_KEY_VALID_FROM
    settings.PITWEB_SIGNING_KEY_VALID_UNTIL = ""
    settings.PITWEB_RETIRED_SIGNING_KEYS = ""
    signing.forget_signing_key()  # the key is read once per process: read this one
    yield key
    signing.forget_signing_key()


@pytest.fixture()
def submitter(db: None) -> User:
    return User.objects.create_user("alice", password="pw-alice")


@pytest.fixture()
def other(db: None) -> User:
    return User.objects.create_user("bob", password="pw-bob")


@pytest.fixture()
def staff(db: None) -> User:
    return User.objects.create_user("carol", password="pw-carol", is_staff=True, is_superuser=True)


def token_client(user: User) -> APIClient:
    from pitweb.accounts.services import token_issue

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(user=user)}")
    return client


@pytest.fixture(scope="session")
def reference_file(tmp_path_factory: pytest.TempPathFactory, site_release: Path) -> Path:
    """The release's reference prices: bars of their own, unlike any submitter's."""
    return build_prices(
        tmp_path_factory.mktemp("reference") / "reference-SYNTHETIC.csv", site_release, seed=9
    )


@pytest.fixture(scope="session")
def memory_cheat_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, reference_file: Path
) -> Artifacts:
    """The demo's deliberate cheat (``harness.agents.memory_cheat``) over ``stub_run``'s
    benchmark, remembering which filings rose in the reference bars, priced with them."""
    root = tmp_path_factory.mktemp("cheat")
    prices = load_prices(reference_file, source="SYNTHETIC reference prices", pulled_at="")
    remembered = memory_cheat.remember(
        site_release, prices, forms=("8-K",), start="2023-03-01", end="2023-03-08",
        hold_sessions=5,
    )  # fmt: skip
    memory_cheat.write_memory(root / "memory.json", remembered)
    command = shlex.join([sys.executable, memory_cheat.__file__, str(root / "memory.json")])
    return make_run(
        site_release, root / "run", reference_file, agent=command_agent(command),
        agent_cmd=command, agent_process="in_process",
    )  # fmt: skip


@pytest.fixture()
def priced_release(registered: Any, reference_file: Path) -> Any:
    """The registered release with reference prices v1."""
    from pitweb.pricing.services import reference_prices_register

    reference_prices_register(
        release=registered,
        path=reference_file,
        source="SYNTHETIC reference prices",
        pulled_at="generated",
        staff=None,
        reason="test reference prices",
    )
    return registered


def submit_run(user: User, artifacts: Artifacts, **replace: bytes | None) -> Any:
    """Upload through the upload service (files replaced as given) and return the run as
    the database holds it afterwards."""
    from pitweb.runs import services

    files = artifacts.files(**replace)
    run = services.run_submit(
        user=user,
        receipt=files["receipt"],
        trajectory=files["trajectory"],
        prices=files.get("prices"),
    ).run
    run.refresh_from_db()
    return run
