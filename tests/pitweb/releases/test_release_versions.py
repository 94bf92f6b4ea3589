"""Versions of a release on the site: registered after their parent and only when they
grow it byte for byte (management command and the staff page), the chain shown on the
release page, a signal after commit, and the EDGAR task that grows a line from a
loopback archive of the SEC's real files."""

from __future__ import annotations

import shutil
from datetime import date
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from harness.release.append import append_synthetic
from harness.release.keys import synthetic_secret
from harness.release.synth import synth_release
from pitweb.releases.models import Release
from pitweb.releases.signals import release_version_registered
from pitweb.releases.tasks import fetch_next_day
from tests.support.data import issuer_offset, reseal_after_edit, shared_path
from tests.support.edgar_server import edgar_server

pytestmark = pytest.mark.django_db(transaction=True)
SEED = 31


@pytest.fixture(scope="module")
def line(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("line")
    synth_release(root / "v1", start=date(2023, 3, 1), end=date(2023, 3, 10), seed=SEED, rows=300)
    append_synthetic(root / "v1", root / "v2", days=2)
    append_synthetic(root / "v2", root / "v3", days=1)
    return [root / "v1", root / "v2", root / "v3"]


def register(path: Path) -> str:
    out = StringIO()
    call_command("register_release", str(path), stdout=out)
    return out.getvalue().strip()


@pytest.fixture
def heard() -> Any:
    calls: list[dict[str, Any]] = []

    def listener(sender: Any, **kwargs: Any) -> None:
        calls.append(kwargs)

    release_version_registered.connect(listener)
    yield calls
    release_version_registered.disconnect(listener)


def test_versions_register_in_order_and_know_their_parent(line: list[Path], heard: Any) -> None:
    first = register(line[0])
    v1 = Release.objects.get()
    assert first == f"registered version 1 of {v1.name} (no parent) {v1.content_digest}"
    said = register(line[1])
    v2 = Release.objects.get(parent=v1)
    assert said == (
        f"registered version 2 of {v1.name} (parent {v1.content_digest}) {v2.content_digest}"
    )
    assert v2.version == 2 and v2.name == v1.name
    assert register(line[1]).startswith("already registered version 2")
    assert [c["release"].pk for c in heard] == [v1.pk, v2.pk]
    assert heard[1]["parent"] == v1
    assert heard[1]["sessions_added"] == ["2023-03-13", "2023-03-14"]
    assert heard[0]["sessions_added"] == []


def test_a_version_before_its_parent_is_refused(line: list[Path], heard: Any) -> None:
    with pytest.raises(CommandError, match="not registered here: register the parent first"):
        register(line[1])
    assert not Release.objects.exists() and heard == []


def test_a_version_that_changed_a_parent_row_is_refused(line: list[Path], tmp_path: Path) -> None:
    register(line[0])
    forged = tmp_path / "v2"
    shutil.copytree(line[1], forged)
    reseal_after_edit(forged, issuer_offset(forged), b"~")
    with pytest.raises(CommandError, match=r"does not grow its parent.*parent row was changed"):
        register(forged)
    assert Release.objects.count() == 1


def test_the_release_page_shows_the_version_chain(line: list[Path], client: Client) -> None:
    for path in line:
        register(path)
    v1, v2, v3 = Release.objects.order_by("version")
    page = client.get(f"/releases/{v2.digest_hex}/").content.decode()
    assert f'href="/releases/{v1.digest_hex}/">version 1</a>' in page
    assert f'href="/releases/{v3.digest_hex}/">version 3</a>' in page
    assert "2023-03-13, 2023-03-14" in page
    first = client.get(f"/releases/{v1.digest_hex}/").content.decode()
    assert "nothing: the first version" in first


@pytest.fixture
def inbox(tmp_path: Path, settings: Any, line: list[Path]) -> Path:
    settings.PITWEB_RELEASE_INBOX = tmp_path / "inbox"
    for n, path in enumerate(line, 1):
        shutil.copytree(path, tmp_path / "inbox" / f"v{n}")
    return tmp_path / "inbox"


def test_staff_register_a_version_from_the_inbox(inbox: Path, staff: User) -> None:
    client = Client()
    client.force_login(staff)
    page = client.get("/releases/register/").content.decode()
    assert all(f"<option>v{n}</option>" in page for n in (1, 2, 3))
    refused = client.post("/releases/register/", {"folder": "v2"}, follow=True)
    assert "register the parent first" in refused.content.decode()
    assert not Release.objects.exists()
    done = client.post("/releases/register/", {"folder": "v1"}, follow=True)
    v1 = Release.objects.get()
    assert done.redirect_chain[-1][0] == f"/releases/{v1.digest_hex}/"
    assert f"Registered version 1 of {v1.name}." in done.content.decode()
    client.post("/releases/register/", {"folder": "v2"})
    assert Release.objects.get(version=2).parent == v1


def test_the_register_page_reads_only_folders_of_the_inbox(
    inbox: Path, staff: User, line: list[Path]
) -> None:
    client = Client()
    client.force_login(staff)
    for name in ("../inbox/v1", str(line[0]), "", "v1/../v1"):
        answer = client.post("/releases/register/", {"folder": name}, follow=True)
        assert "is not a folder of the inbox" in answer.content.decode()
    assert not Release.objects.exists()


def test_the_register_page_is_staff_only_and_csrf_protected(
    inbox: Path, submitter: User, staff: User
) -> None:
    assert Client().get("/releases/register/").status_code == 302  # to sign in
    client = Client()
    client.force_login(submitter)
    assert client.post("/releases/register/", {"folder": "v1"}).status_code == 403
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(staff)
    assert checked.post("/releases/register/", {"folder": "v1"}).status_code == 403
    assert not Release.objects.exists()


def test_the_edgar_task_grows_the_line_from_the_loopback_server(
    tmp_path: Path, settings: Any
) -> None:
    """A line up to Friday 2022-09-30, grown by Monday's real daily index; run twice,
    the second run registers nothing."""
    v1 = tmp_path / "v1"
    synth_release(v1, start=date(2022, 9, 26), end=date(2022, 9, 30), seed=SEED, rows=80)
    register(v1)
    secret = tmp_path / "secret"
    secret.write_text(synthetic_secret(SEED).hex() + "\n")
    with edgar_server() as edgar:
        edgar.add_index(shared_path("data", "edgar", "company.20221003.idx"), "20221003")
        settings.PITWEB_EDGAR_BASE_URL = edgar.url
        settings.PITWEB_EDGAR_USER_AGENT = "pitweb tests tests@example.org"
        settings.PITWEB_EDGAR_INBOX = tmp_path / "edgar-inbox"
        settings.PITWEB_EDGAR_RELEASE = Release.objects.get().name
        settings.PITWEB_EDGAR_SECRET_FILE = str(secret)
        settings.PITWEB_EDGAR_FORMS = ["10-K"]
        digest = fetch_next_day.delay(today="2022-10-04").get()
        asked = len(edgar.seen)
        assert fetch_next_day.delay(today="2022-10-04").get() is None
        assert len(edgar.seen) == asked  # nothing asked again
    v2 = Release.objects.get(content_digest=digest)
    assert v2.parent == Release.objects.get(version=1) and v2.version == 2
    assert v2.manifest["sessions_added"] == ["2022-10-03"]
    assert v2.manifest["added"]["source"]["backdated_left_out"] > 0
    assert Release.objects.count() == 2
    paths = [p for p, _ in edgar.seen]
    assert paths[0] == "/Archives/edgar/daily-index/2022/QTR4/company.20221003.idx"


def test_the_edgar_task_does_nothing_when_off(settings: Any, line: list[Path]) -> None:
    register(line[0])
    settings.PITWEB_EDGAR_BASE_URL = ""
    assert fetch_next_day.delay(today="2023-04-01").get() is None
    assert Release.objects.count() == 1


def test_the_edgar_fetcher_without_a_user_agent_refuses_to_start(tmp_path: Path) -> None:
    from tests.pitweb.test_settings import manage

    done = manage(
        "check",
        PITWEB_EDGAR_BASE_URL="https://www.sec.gov",
        PITWEB_EDGAR_USER_AGENT="",
        PITWEB_VAR_DIR=str(tmp_path),
    )
    assert done.returncode != 0
    assert "PITWEB_EDGAR_USER_AGENT is required when PITWEB_EDGAR_BASE_URL is set" in done.stderr


def test_the_beat_fetches_from_edgar_only_when_enabled(tmp_path: Path) -> None:
    from tests.pitweb.test_settings import manage

    code = "from django.conf import settings; print(sorted(settings.CELERY_BEAT_SCHEDULE))"
    off = manage("shell", "-c", code, PITWEB_VAR_DIR=str(tmp_path))
    on = manage("shell", "-c", code, PITWEB_VAR_DIR=str(tmp_path),
                PITWEB_EDGAR_BASE_URL="https://www.sec.gov",
                PITWEB_EDGAR_USER_AGENT="Jane Doe jane.doe@example.com",
                PITWEB_EDGAR_RELEASE="line", PITWEB_EDGAR_SECRET_FILE="secret")  # fmt: skip
    assert "edgar-fetch-next-day" not in off.stdout
    assert "edgar-fetch-next-day" in on.stdout, on.stderr
