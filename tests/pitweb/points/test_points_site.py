"""Judged points on the site: PITFALL's real set imported and shown, a sealed set that
leaks nothing of its hidden sections anywhere a visitor can reach, the reveal, hostile
archives refused with nothing stored, and point Markdown rendered inert."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from harness.points.markdown import load_points
from harness.points.seal import commitment
from pitweb.points.models import (
    AnswerSet,
    JudgedSet,
    ModelEndpoint,
    Point,
    PointSet,
    PointsJob,
    Verdict,
)
from tests.support.data import shared_path
from tests.support.points_site import (
    SECRET_SOURCE,
    SECRET_TRUTH,
    point_file,
    point_files,
    zipped,
)

pytestmark = pytest.mark.django_db


def _upload(client: Client, data: bytes, **fields: str) -> Any:
    form = {"name": "sealed-one", "state": "sealed", "reveal_on": "2030-01-01", **fields}
    upload = io.BytesIO(data)
    upload.name = "points.zip"
    return client.post("/points/upload/", {**form, "archive": upload})


@pytest.fixture()
def staff_client(staff: User) -> Client:
    client = Client()
    client.force_login(staff)
    return client


# -- PITFALL's real set ------------------------------------------------------------------


def test_pitfalls_real_points_and_baseline_import_and_show_their_distribution() -> None:
    points = shared_path("data", "pitfall", "points")
    [results] = sorted(shared_path("data", "pitfall", "results").glob("*.json"))
    call_command("import_pitfall", "--points", str(points), "--results", str(results))
    call_command("import_pitfall", "--points", str(points), "--results", str(results))  # again
    assert (PointSet.objects.count(), JudgedSet.objects.count(), Verdict.objects.count()) == (
        1,
        1,
        174,
    )
    client = Client()
    answer = client.get("/points/pitfall-public/?table=judged&format=json").json()
    [row] = answer["judged_sets"]
    counts = [row[c] for c in ("completely_correct", "numeric_factual_error",
                               "non_numeric_factual_error", "analysis_assumption_error",
                               "analysis_logic_error", "other_error")]  # fmt: skip
    assert counts == [132, 4, 4, 31, 3, 0]
    assert (row["pass"], row["fail"], row["harness_error"]) == (132, 42, 0)
    assert row["ranked"] is False and "public" in row["not_ranked_because"]
    page = client.get("/points/pitfall-public/").content.decode()
    assert "development data" in page.lower() and 'data-figure="fig-distribution"' in page
    # one judged set: its class bars with intervals, and no radar (nothing to overlay)
    assert 'data-figure="fig-radar"' not in page
    assert "75.9%" in page  # 132/174, with its Wilson interval beside it
    csv = client.get(
        f"/points/pitfall-public/judged/{row['judged_set']}/?class=analysis_logic_error&format=csv"
    )
    assert csv.status_code == 200 and csv.content.decode().count("\nanalysis_logic_error") == 0
    assert len(csv.content.decode().strip().splitlines()) >= 4  # the header and three verdicts
    listing = client.get(
        f"/points/pitfall-public/judged/{row['judged_set']}/?class=analysis_logic_error&format=json"
    ).json()["verdicts"]
    assert len(listing) == 3 and {v["class"] for v in listing} == {"analysis_logic_error"}
    assert all(v["decisive_reason"] for v in listing)  # public: the reasons are shown
    # PITFALL's judge, and the time its run started (it records none per verdict)
    started = json.loads(results.read_text(encoding="utf-8"))["started_at"]
    assert {(v["judge_model"], v["judged_at"]) for v in listing} == {("gpt-5.6-sol", started)}


# -- a sealed set ------------------------------------------------------------------------


def _visitor_pages(client: Client, name: str, judged: int | None) -> dict[str, str]:
    urls = [
        "/points/",
        "/points/?format=csv",
        "/points/?format=json",
        f"/points/{name}/",
        f"/points/{name}/?table=questions&format=csv",
        f"/points/{name}/?table=questions&format=json",
        f"/points/{name}/?table=judged&format=json",
        f"/points/{name}/?table=suites&format=csv",
        f"/points/{name}/?table=nope&format=csv",
        f"/points/{name}/?format=xml",
        f"/points/{name}/judged/x/",
        f"/points/{name}/reveal/",
        "/changelog/",
        "/admin/points/",
    ]
    if judged is not None:
        urls += [
            f"/points/{name}/judged/{judged}/",
            f"/points/{name}/judged/{judged}/?format=json",
            f"/points/{name}/judged/{judged}/?format=csv&class=other_error",
        ]
    return {url: client.get(url).content.decode() for url in urls}


def _secrets(point_set: PointSet) -> list[str]:
    found = [point_set.suite_sha256, point_set.salt]
    for p in Point.objects.filter(point_set=point_set):
        found += [p.ground_truth, p.provenance, p.point_sha256, p.ground_truth_sha256]
    return [*found, SECRET_TRUTH, SECRET_SOURCE]


def test_a_sealed_set_shows_its_questions_and_commitment_and_nothing_hidden(
    staff_client: Client, staff: User
) -> None:
    response = _upload(staff_client, zipped(point_files()))
    assert response.status_code == 302, response.content.decode()[:500]
    point_set = PointSet.objects.get(name="sealed-one")
    assert point_set.state == "sealed" and len(point_set.salt) == 64
    # a judged set over it, with reasons that quote the Ground Truth
    answers = AnswerSet.objects.create(
        point_set=point_set, sha256="sha256:" + "0" * 64, model="m", origin="uploaded", body={}
    )
    judged = JudgedSet.objects.create(
        answer_set=answers, origin="site", status="usable", judge_model="j",
        summary={"class_counts": {"completely_correct": 3}, "pass": 3, "fail": 0,
                 "harness_error": 0, "accuracy": 1.0, "accuracy_interval_95": [0.4, 1.0]},
    )  # fmt: skip
    for p in point_set.points.all():
        Verdict.objects.create(
            judged_set=judged, point=p, judged_class="completely_correct", outcome="PASS",
            decisive_reason=f"matches: {p.ground_truth}", answer=p.ground_truth,
        )  # fmt: skip
    # a job whose failure quotes a Ground Truth (a judge's reply may)
    endpoint = ModelEndpoint.objects.create(name="j", base_url="http://127.0.0.1:9/v1", model="j")
    job = PointsJob.objects.create(
        kind="judge", state="control_failed", point_set=point_set, endpoint=endpoint,
        answer_set=answers, message=f"judge said: {point_set.points.first().ground_truth}",
    )  # fmt: skip
    visitor = Client()
    pages = _visitor_pages(visitor, point_set.name, judged.pk)
    pages[f"/points/jobs/{job.pk}.json"] = visitor.get(
        f"/points/jobs/{job.pk}.json"
    ).content.decode()
    # staff see a sealed set as anyone does: its hidden sections leave only by the reveal
    staff_pages = _visitor_pages(staff_client, point_set.name, judged.pk)
    assert point_set.points.first().ground_truth in staff_pages[f"/points/{point_set.name}/"]
    del staff_pages[f"/points/{point_set.name}/"]  # staff read a failed job's message whole
    pages |= {f"staff:{k}": v for k, v in staff_pages.items()}
    secrets = _secrets(point_set)
    for url, text in pages.items():
        for secret in secrets:
            assert secret not in text, f"{url} shows {secret[:40]!r}"
    page = pages[f"/points/{point_set.name}/"]
    assert point_set.commitment in page and "What is figure 1?" in page
    assert point_set.question_digest in page
    # the commitment is the one the engine computes with the salt, over the files
    folder = _unpacked(point_files())
    assert commitment(point_set.salt, load_points(folder)) == point_set.commitment


def _unpacked(files: dict[str, str]) -> Path:
    import tempfile

    root = Path(tempfile.mkdtemp())
    for name, text in files.items():
        target = root / name.removeprefix("points/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def test_the_reveal_waits_for_its_date_then_publishes_salt_and_sections(
    staff_client: Client, settings: Any
) -> None:
    assert _upload(staff_client, zipped(point_files()), reveal_on="2999-01-01").status_code == 302
    early = staff_client.post("/points/sealed-one/reveal/")
    assert early.status_code == 409 and "2999-01-01" in early.content.decode()
    assert PointSet.objects.get().state == "sealed"
    PointSet.objects.update(reveal_on=dt.date.today())
    assert Client().post("/points/sealed-one/reveal/").status_code == 302  # to the login
    assert PointSet.objects.get().state == "sealed"
    assert staff_client.post("/points/sealed-one/reveal/").status_code == 302
    point_set = PointSet.objects.get()
    assert point_set.state == "revealed" and point_set.rankable
    page = Client().get("/points/sealed-one/").content.decode()
    assert point_set.salt in page and point_set.suite_sha256 in page and SECRET_TRUTH in page
    again = staff_client.post("/points/sealed-one/reveal/")
    assert again.status_code == 409


# -- hostile archives --------------------------------------------------------------------


def _tar(add: Any) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in point_files().items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        add(archive)
    return buffer.getvalue()


def _special(kind: bytes, name: str, target: str = "") -> Any:
    def add(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = target
        archive.addfile(info)

    return add


def _member(name: str, text: str = "x") -> Any:
    def add(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.size = len(text)
        archive.addfile(info, io.BytesIO(text.encode()))

    return add


def _bomb() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in point_files().items():
            archive.writestr(name, text)
        archive.writestr("points/padding.md", b"\0" * (9 * 1024 * 1024))
    return buffer.getvalue()


HOSTILE = {
    "a symbolic link": _tar(_special(tarfile.SYMTYPE, "points/evil.md", "/etc/passwd")),
    "a hard link": _tar(_special(tarfile.LNKTYPE, "points/evil.md", "points/META.md")),
    "a device": _tar(_special(tarfile.CHRTYPE, "points/null.md")),
    "a fifo": _tar(_special(tarfile.FIFOTYPE, "points/pipe.md")),
    "an absolute path": _tar(_member("/tmp/evil.md")),
    "a parent path": _tar(_member("points/../../evil.md")),
    "a backslash": _tar(_member("points\\..\\evil.md")),
    "not an archive": b"just some bytes, no archive at all",
    "a broken point": zipped({**point_files(), "points/bad.md": "# bad\n\nno sections\n"}),
    "no template": zipped({k: v for k, v in point_files().items() if not k.endswith("META.md")}),
    "a zip bomb": _bomb(),
}


@pytest.mark.parametrize("why", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_and_nothing_is_stored(
    why: str, staff_client: Client, settings: Any, tmp_path: Path
) -> None:
    settings.PITWEB_MAX_POINTSET_UNPACKED = 8 * 1024 * 1024
    response = _upload(staff_client, HOSTILE[why])
    assert response.status_code == 400, (why, response.status_code)
    assert "Refused" in response.content.decode()
    assert PointSet.objects.count() == 0 and Point.objects.count() == 0
    assert not Path("/tmp/evil.md").exists()


def test_too_many_members_are_refused(staff_client: Client, settings: Any) -> None:
    settings.PITWEB_MAX_POINTSET_MEMBERS = 3
    response = _upload(staff_client, zipped(point_files()))
    assert response.status_code == 400 and "more than 3 members" in response.content.decode()
    assert PointSet.objects.count() == 0


def test_only_staff_upload_point_sets(submitter: User) -> None:
    client = Client()
    client.force_login(submitter)
    response = _upload(client, zipped(point_files()))
    assert response.status_code == 403  # signed in, not staff: refused, never the admin login
    assert PointSet.objects.count() == 0


# -- Markdown rendered inert -------------------------------------------------------------


def test_hostile_markdown_renders_inert_and_details_still_work(staff_client: Client) -> None:
    hostile = (
        "Look <script>alert('q')</script> <img src=x onerror=\"alert(1)\"> "
        '<a href="javascript:alert(2)">click</a> [md](javascript:alert(3)) '
        '<a href="https://example.org/x">fine</a>\n\n'
        "<details><summary>More</summary>\n\nfolded text\n\n</details>\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |"
    )
    files = point_files(1) | {"points/x/hostile.md": point_file("hostile", hostile, "t", "p")}
    assert _upload(staff_client, zipped(files), state="public").status_code == 302
    page = Client().get("/points/sealed-one/").content.decode()
    section = re.search(r'<section class="point" id="point-hostile">(.*?)</section>', page, re.S)
    assert section is not None
    html = section.group(1)
    assert "<script" not in html and "<img" not in html and "onerror=" not in html
    assert not re.search(r"href=\W*javascript", html, re.I)  # as text it is inert
    assert "<details><summary>More</summary>" in html and "<td>1</td>" in html
    assert 'href="https://example.org/x"' in html and "noopener" in html
    questions = json.loads(Client().get("/points/sealed-one/?table=questions&format=json").content)[
        "points"
    ]
    assert any("<script>" in q["question"] for q in questions)  # the export is the raw text
