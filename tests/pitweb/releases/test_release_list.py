"""The releases page: every registered release with its window, rows, largest forms,
current reference prices, benchmarks, verified public runs and archive; its CSV and
JSON say what its table says; a release's name is never markup or a formula; a fixed
number of queries however many releases."""

from __future__ import annotations

import csv
import io
from datetime import date
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.template.defaultfilters import filesizeformat
from django.test import Client
from django.test.utils import CaptureQueriesContext

from pitweb.release_list import forms_in_words
from pitweb.releases.models import ReferencePrices, Release
from pitweb.runs.models import Run
from pitweb.runs.templatetags.pitweb_extras import when
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)


class _Table(HTMLParser):
    """The text of each body row's cells of the table ``#releases``."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = self.in_body = False
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", "releases") in attrs:
            self.inside = True
        elif self.inside and tag == "tbody":
            self.in_body = True
        elif self.in_body and tag == "tr":
            self.rows.append([])
        elif self.in_body and tag == "td":
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.inside = self.in_body = False

    def handle_data(self, data: str) -> None:
        if self.in_body and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data


def table(html: str) -> list[list[str]]:
    parser = _Table()
    parser.feed(html)
    return [[" ".join(cell.split()) for cell in row] for row in parser.rows]


def page() -> str:
    response = Client().get("/releases/")
    assert response.status_code == 200
    return str(response.content.decode())


def make_release(n: int, name: str | None = None, *, priced: bool = False) -> Release:
    release = Release.objects.create(
        content_digest=f"sha256:{n:064x}",
        name=name if name is not None else f"release-{n}",
        manifest={"row_counts": {"total": 100, "by_form": {"4": 60, "8-K": 30, "10-Q": 10}}},
        window_start=date(2023, 3, 1),
        window_end=date(2023, 3, 31),
        row_count=100,
        storage_prefix=f"releases/{n:064x}",
    )
    if priced:
        ReferencePrices.objects.create(
            release=release, version=1, source="test", pulled_at="now",
            file_sha256=f"sha256:{n:064x}", file_name=f"prices/{n}.csv", basis="open",
            symbols=1, bars=1, reason="test",
        )  # fmt: skip
    return release


@pytest.fixture()
def verified_run(priced_release: Release, submitter: User, stub_run: Artifacts) -> Run:
    run = submit_run(submitter, stub_run)
    assert run.proven and run.visibility == "public", run.verification_level
    return run


def test_each_release_shows_its_window_rows_forms_prices_counts_and_archive(
    verified_run: Run,
) -> None:
    release = Release.objects.get()
    prices = release.reference_prices.get()
    html = page()
    assert f'href="/releases/{release.digest_hex}/"' in html
    (row,) = table(html)
    assert row[0].startswith(release.name)
    assert row[1] == f"{release.window_start} to {release.window_end}"
    assert row[2] == str(release.row_count)
    assert row[3] == forms_in_words(release.manifest["row_counts"]["by_form"]) != ""
    assert row[4] == f"v{prices.version}, registered {when(prices.registered_at)}"
    assert row[5:7] == ["1", "1"]  # one benchmark, one verified public run
    assert row[7] == filesizeformat(release.archive_size).replace("\xa0", " ")
    assert f'href="/releases/{release.digest_hex}/archive.tar"' in html


def test_a_release_without_reference_prices_says_its_runs_are_not_ranked(
    registered: Release,
) -> None:
    (row,) = table(page())
    assert row[4] == "none yet: not ranked"


def test_private_hidden_and_withdrawn_runs_are_counted_nowhere(verified_run: Run) -> None:
    for change in (
        {"visibility": "private"},
        {"hidden": True},
        {"withdrawn_at": verified_run.submitted_at},
    ):
        Run.objects.filter(pk=verified_run.pk).update(**change)
        (row,) = table(page())
        assert row[5:7] == ["0", "0"], change
        Run.objects.filter(pk=verified_run.pk).update(
            visibility="public", hidden=False, withdrawn_at=None
        )
    assert table(page())[0][5:7] == ["1", "1"]


def test_a_run_not_yet_verified_is_not_counted_as_verified(verified_run: Run) -> None:
    Run.objects.filter(pk=verified_run.pk).update(verification_level="self_reported")
    (row,) = table(page())
    assert row[5:7] == ["1", "0"]  # its benchmark holds it; it is not verified


def test_the_csv_and_json_exports_say_what_the_table_says(verified_run: Run) -> None:
    make_release(1, "older, unpriced")
    shown = table(page())
    exported = list(
        csv.DictReader(io.StringIO(Client().get("/releases/?format=csv").content.decode()))
    )
    listed = Client().get("/releases/?format=json").json()["releases"]
    assert len(shown) == len(exported) == len(listed) == 2
    for cells, row, item in zip(shown, exported, listed, strict=True):
        assert {k: str(v if v is not None else "") for k, v in item.items()} == row
        assert cells[0].startswith(row["name"]) and row["content_digest"][7:19] in cells[0]
        assert cells[1] == f"{row['window_start']} to {row['window_end']}"
        assert [cells[2], cells[3]] == [row["rows"], row["forms"]]
        if row["prices_version"]:
            assert (
                cells[4]
                == f"v{row['prices_version']}, registered {when(row['prices_registered_at'])}"
            )
        else:
            assert cells[4] == "none yet: not ranked" and item["prices_registered_at"] is None
        assert cells[5:7] == [row["benchmarks"], row["verified_public_runs"]]
        if item["archive_bytes"] is not None:
            assert cells[7] == filesizeformat(item["archive_bytes"]).replace("\xa0", " ")
        assert Client().get(row["page"]).status_code == 200


def test_with_no_release_the_page_says_so_in_one_line() -> None:
    html = page()
    assert '<p class="empty">No release has been registered yet.</p>' in html
    assert "<table" not in html
    assert Client().get("/releases/?format=json").json() == {"releases": []}


def test_a_hostile_release_name_is_text_on_the_page_and_no_formula_in_the_csv() -> None:
    make_release(1, '<script>alert("x")</script>')
    make_release(2, '=HYPERLINK("http://evil.example","click")')
    html = page()
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    names = [
        r["name"]
        for r in csv.DictReader(io.StringIO(Client().get("/releases/?format=csv").content.decode()))
    ]
    assert sorted(names) == sorted(
        ['\'=HYPERLINK("http://evil.example","click")', '<script>alert("x")</script>']
    )


def test_the_page_costs_the_same_queries_for_one_release_and_twenty() -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            page()
        return len(captured)

    make_release(0, priced=True)
    one = queries()
    for n in range(1, 20):
        make_release(n, priced=n % 2 == 0)
    assert len(table(page())) == 20
    assert queries() == one <= 3


def test_the_menu_has_releases_marked_current_on_the_list_and_a_release_page(
    registered: Release,
) -> None:
    for path in ("/releases/", f"/releases/{registered.digest_hex}/"):
        html = Client().get(path).content.decode()
        assert '<a href="/releases/" aria-current="page">Releases</a>' in html, path


def test_a_release_page_links_back_to_the_list(registered: Release) -> None:
    html = Client().get(f"/releases/{registered.digest_hex}/").content.decode()
    assert '<a href="/releases/">All releases</a>' in html


def test_the_list_is_only_read() -> None:
    assert Client().post("/releases/").status_code == 405


def test_forms_are_the_largest_three_with_their_share_and_the_rest_counted() -> None:
    by_form = {"8-K": 30, "4": 60, "10-Q": 9, "S-1": 1, "SC 13D": 0}
    assert forms_in_words(by_form) == "4 (60%), 8-K (30%), 10-Q (9%) and 2 more"
    assert forms_in_words({"4": 999, "8-K": 1}) == "4 (100%), 8-K (<1%)"
    assert forms_in_words({}) == ""
