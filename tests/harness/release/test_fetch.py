"""The EDGAR fetcher against a loopback server laid out as the SEC's archive, serving
the real daily index of 2022-10-03 and real filing headers: what it asks for, how it
names itself, how fast, what it skips, and the version it builds from its inbox."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from harness.release.bundle import Bundle
from harness.release.chain import verify_chain
from harness.release.fetch import (
    FetchError,
    RateLimiter,
    fetch_days,
    grow_from_inbox,
    inbox_days,
)
from harness.release.keys import synthetic_secret
from harness.release.synth import synth_release
from tests.support.data import shared_path
from tests.support.edgar_server import Edgar, edgar_server

AGENT = "pitweb tests tests@example.org"
SEED = 5
OCT3 = date(2022, 10, 3)
ACCESSION = re.compile(r"edgar/data/(\d+)/(\d{10}-\d{2}-\d{6})\.txt")


class FakeClock:
    """Time that passes only when the limiter sleeps: the limit is checked, not waited."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds


def _limiter(per_second: int = 10) -> tuple[RateLimiter, FakeClock]:
    clock = FakeClock()
    return RateLimiter(per_second, clock=clock, sleep=clock.sleep), clock


def _eight_ks(index: Path) -> set[str]:
    """The accessions of the file's 8-K listings, by a plain scan of its columns."""
    found = set()
    for line in index.read_text(encoding="latin-1").splitlines():
        m = ACCESSION.search(line)
        if m and line[62:74].strip() == "8-K":
            found.add(m[2])
    return found


@pytest.fixture
def edgar() -> Edgar:
    with edgar_server() as served:
        served.add_index(shared_path("data", "edgar", "company.20221003.idx"), "20221003")
        yield served  # type: ignore[misc]


def test_the_fetcher_fetches_a_day_and_its_8k_headers_naming_itself(
    edgar: Edgar, tmp_path: Path
) -> None:
    limiter, _ = _limiter()
    inbox = tmp_path / "inbox"
    found = fetch_days(
        edgar.url, user_agent=AGENT, inbox=inbox, days=[OCT3], forms={"8-K"}, limiter=limiter
    )
    index = shared_path("data", "edgar", "company.20221003.idx")
    assert found == [inbox / "daily-index" / "company.20221003.idx"]
    assert found[0].read_bytes() == index.read_bytes()
    paths = [p for p, _ in edgar.seen]
    assert paths[0] == "/Archives/edgar/daily-index/2022/QTR4/company.20221003.idx"
    asked = {p.rsplit("/", 1)[1].removesuffix(".hdr.sgml") for p in paths[1:]}
    assert asked == _eight_ks(index)
    assert all(agent == AGENT for _, agent in edgar.seen)
    # none of those headers is served: each is recorded absent, none fatal
    assert len(list((inbox / "headers").glob("*.absent"))) == len(asked)


def test_the_fetcher_never_exceeds_its_rate(edgar: Edgar, tmp_path: Path) -> None:
    limiter, clock = _limiter(10)
    fetch_days(
        edgar.url, user_agent=AGENT, inbox=tmp_path, days=[OCT3], forms={"8-K"}, limiter=limiter
    )
    stamps = limiter.history
    assert len(stamps) == len(edgar.seen) > 100
    # any eleven consecutive requests span at least a second
    assert all(stamps[i + 10] - stamps[i] >= 1.0 for i in range(len(stamps) - 10))
    # and it did not dawdle: n requests at 10 a second take about n / 10 seconds
    assert clock.now <= len(stamps) / 10


def test_a_second_fetch_asks_only_for_what_the_inbox_lacks(edgar: Edgar, tmp_path: Path) -> None:
    for _ in range(2):
        fetch_days(edgar.url, user_agent=AGENT, inbox=tmp_path, days=[OCT3], forms={"8-K"},
                   limiter=_limiter()[0])  # fmt: skip
    first = len(_eight_ks(shared_path("data", "edgar", "company.20221003.idx"))) + 1
    assert len(edgar.seen) == first


def test_a_day_without_an_index_is_recorded_not_fatal(edgar: Edgar, tmp_path: Path) -> None:
    columbus_day = date(2022, 10, 10)  # a federal holiday: EDGAR closed
    found = fetch_days(edgar.url, user_agent=AGENT, inbox=tmp_path, days=[columbus_day, OCT3],
                       forms=set(), limiter=_limiter()[0])  # fmt: skip
    assert [p.name for p in found] == ["company.20221003.idx"]
    assert inbox_days(tmp_path) == {OCT3: found[0], columbus_day: None}
    fetch_days(edgar.url, user_agent=AGENT, inbox=tmp_path, days=[columbus_day],
               forms=set(), limiter=_limiter()[0])  # fmt: skip
    assert [p for p, _ in edgar.seen].count(
        "/Archives/edgar/daily-index/2022/QTR4/company.20221010.idx"
    ) == 1


def test_a_redirect_off_the_host_is_refused(edgar: Edgar, tmp_path: Path) -> None:
    edgar.redirects["/Archives/edgar/daily-index/2022/QTR4/company.20221004.idx"] = (
        "http://elsewhere.example/company.20221004.idx"
    )
    with pytest.raises(FetchError, match=r"off http://127\.0\.0\.1:[0-9]+; refused"):
        fetch_days(edgar.url, user_agent=AGENT, inbox=tmp_path, days=[date(2022, 10, 4)],
                   limiter=_limiter()[0])  # fmt: skip
    assert not list((tmp_path / "daily-index").glob("company.20221004.*"))


def test_a_redirect_within_the_host_is_followed(edgar: Edgar, tmp_path: Path) -> None:
    edgar.redirects["/Archives/edgar/daily-index/2022/QTR4/company.20221003.idx"] = (
        "/moved/company.20221003.idx"
    )
    real = shared_path("data", "edgar", "company.20221003.idx").read_bytes()
    edgar.files["/moved/company.20221003.idx"] = real
    found = fetch_days(edgar.url, user_agent=AGENT, inbox=tmp_path, days=[OCT3], forms=set(),
                       limiter=_limiter()[0])  # fmt: skip
    assert found[0].read_bytes() == real


def test_a_page_that_is_not_an_index_is_refused_and_not_kept(edgar: Edgar, tmp_path: Path) -> None:
    edgar.files["/Archives/edgar/daily-index/2022/QTR4/company.20221004.idx"] = (
        b"<html>Request Rate Threshold Exceeded</html>"
    )
    with pytest.raises(FetchError, match="not a daily index"):
        fetch_days(edgar.url, user_agent=AGENT, inbox=tmp_path, days=[date(2022, 10, 4)],
                   limiter=_limiter()[0])  # fmt: skip
    assert list((tmp_path / "daily-index").iterdir()) == []


def test_no_user_agent_is_refused_before_any_request(edgar: Edgar, tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="User-Agent"):
        fetch_days(edgar.url, user_agent=" ", inbox=tmp_path, days=[OCT3])
    assert edgar.seen == []


def test_the_fetcher_builds_a_version_from_the_loopback_server(
    edgar: Edgar, tmp_path: Path
) -> None:
    """A release up to Friday 2022-09-30 grows by Monday's real daily index."""
    parent = tmp_path / "v1"
    synth_release(parent, start=date(2022, 9, 26), end=date(2022, 9, 30), seed=SEED, rows=60)
    inbox = tmp_path / "inbox"
    fetch_days(edgar.url, user_agent=AGENT, inbox=inbox, days=[OCT3], forms={"8-K"},
               limiter=_limiter()[0])  # fmt: skip
    manifest = grow_from_inbox(
        parent, inbox, tmp_path / "v2", row_key_secret=synthetic_secret(SEED)
    )
    assert manifest is not None
    assert manifest["sessions_added"] == ["2022-10-03"]
    assert verify_chain([parent, tmp_path / "v2"]) == []
    rows = Bundle.load(tmp_path / "v2", start="2022-10-03").rows("main")
    assert _eight_ks(shared_path("data", "edgar", "company.20221003.idx")) <= {
        r["accession"] for r in rows
    }
    # nothing new in the inbox: nothing to grow
    assert grow_from_inbox(tmp_path / "v2", inbox, tmp_path / "v3",
                           row_key_secret=synthetic_secret(SEED)) is None  # fmt: skip


def _one_filing_index(header: Path, tmp_path: Path) -> tuple[Path, str, str]:
    """A daily company.idx listing the one filing of a real header, in the real daily
    file's own layout (its preamble, its column widths), with the header's own facts."""
    text = header.read_text(encoding="latin-1")
    facts = {
        key: re.search(rf"{key}:\s*(.+)", text)[1].strip()  # type: ignore[index]
        for key in ("COMPANY CONFORMED NAME", "CENTRAL INDEX KEY", "FILED AS OF DATE",
                    "CONFORMED SUBMISSION TYPE")
    }  # fmt: skip
    accession = header.name.removesuffix(".hdr.sgml")
    cik = str(int(facts["CENTRAL INDEX KEY"]))
    day = facts["FILED AS OF DATE"]
    real = shared_path("data", "edgar", "company.20221003.idx").read_text(encoding="latin-1")
    preamble = real[: real.index("-" * 20)]
    dashes = real.splitlines()[len(preamble.splitlines())]
    row = (
        f"{facts['COMPANY CONFORMED NAME']:<62}{facts['CONFORMED SUBMISSION TYPE']:<12}"
        f"{cik:<12}{day:<12}edgar/data/{cik}/{accession}.txt"
    )
    path = tmp_path / f"company.{day}.idx"
    path.write_text(f"{preamble}{dashes}\n{row}\n", encoding="latin-1")
    return path, cik, day


def test_fetched_headers_stamp_the_rows_of_the_version(edgar: Edgar, tmp_path: Path) -> None:
    header = shared_path("data", "edgar", "headers", "0000072333-23-000015.hdr.sgml")
    index, cik, day = _one_filing_index(header, tmp_path)
    edgar.add_index(index, day)
    edgar.add_header(header, cik)
    parent = tmp_path / "v1"
    synth_release(parent, start=date(2023, 2, 27), end=date(2023, 3, 3), seed=SEED, rows=60)
    inbox = tmp_path / "inbox"
    fetch_days(edgar.url, user_agent=AGENT, inbox=inbox, days=[date(2023, 3, 6)],
               limiter=_limiter()[0])  # fmt: skip
    assert (inbox / "headers" / header.name).read_bytes() == header.read_bytes()
    manifest = grow_from_inbox(
        parent, inbox, tmp_path / "v2", row_key_secret=synthetic_secret(SEED)
    )
    assert manifest is not None
    (row,) = Bundle.load(tmp_path / "v2", start="2023-03-06").rows("main")
    # <ACCEPTANCE-DATETIME>20230306172921 is New York time, EST in early March
    assert row["acceptance_at"] == "2023-03-06T17:29:21-05:00"


def test_a_body_past_the_limit_is_refused_and_nothing_kept(
    edgar: Edgar, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.release import fetch

    monkeypatch.setattr(fetch, "MAX_BODY", 1000)  # the real index is far longer
    limiter, _ = _limiter()
    with pytest.raises(FetchError, match="more than 1000 bytes; refused"):
        fetch_days(
            edgar.url, user_agent=AGENT, inbox=tmp_path, days=[OCT3], forms={"8-K"},
            limiter=limiter,
        )  # fmt: skip
    assert not list(tmp_path.rglob("*.idx"))
