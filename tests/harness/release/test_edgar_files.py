"""Releases built from the SEC's own files (../shared/data/edgar/): a real daily
company.idx and form.idx, and 60 real filing headers; the other layouts (gzip, quarterly,
master.idx, the wider form column of recent files) are made here from the same real rows, and every
count a test checks is made from the file by the test itself."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from harness.release.bundle import Bundle
from harness.release.edgar import build_release, parse_acceptance, parse_index, read_tickers
from harness.release.store import ReleaseError
from tests.support.data import shared_path

SECRET = bytes(range(32))
ACCESSION = re.compile(r"edgar/data/(\d+)/(\d{10}-\d{2}-\d{6})\.txt")
# the daily company.idx's columns, as its rows lay them out (counted here independently)
COMPANY_COLUMNS = {"company": (0, 62), "form": (62, 74), "cik": (74, 86), "date": (86, 98)}
FORM_COLUMNS = {"form": (0, 12), "company": (12, 74), "cik": (74, 86), "date": (86, 98)}


def _company_idx() -> Path:
    return shared_path("data", "edgar", "company.20221003.idx")


def _form_idx() -> Path:
    return shared_path("data", "edgar", "form.20200318.idx")


def _headers() -> list[Path]:
    return sorted(shared_path("data", "edgar", "headers").glob("*.hdr.sgml"))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="latin-1").splitlines()


def _cell(line: str, columns: dict[str, tuple[int, int]], name: str) -> str:
    start, end = columns[name]
    return line[start:end].strip()


def _count(path: Path, columns: dict[str, tuple[int, int]]) -> tuple[int, dict[str, list[str]]]:
    """Listings, and accession -> its listings' lines, by a plain scan of the file."""
    listings, by_accession = 0, dict[str, list[str]]()
    for line in _lines(path):
        m = ACCESSION.search(line)
        if m:
            listings += 1
            by_accession.setdefault(m[2], []).append(line)
    return listings, by_accession


def _build(out: Path, *index: Path, **kwargs: Any) -> dict[str, Any]:
    return build_release(
        out, index_files=list(index), name="edgar-real", row_key_secret=SECRET, **kwargs
    )


def _main(folder: Path) -> bytes:
    return (folder / "main.jsonl").read_bytes()


# -- the real daily indexes -------------------------------------------------------------


@pytest.mark.parametrize(
    ("which", "columns", "kind"),
    [("company", COMPANY_COLUMNS, "company"), ("form", FORM_COLUMNS, "form")],
)
def test_a_real_daily_index_gives_one_row_per_filing_with_the_forms_the_file_lists(
    tmp_path: Path, which: str, columns: dict[str, tuple[int, int]], kind: str
) -> None:
    path = _company_idx() if which == "company" else _form_idx()
    listings, by_accession = _count(path, columns)
    forms = Counter(_cell(lines[0], columns, "form") for lines in by_accession.values())
    manifest = _build(tmp_path / "rel", path)
    if which == "company":
        assert listings == 4925  # as the data's README says
    assert manifest["row_counts"]["total"] == len(by_accession)
    assert manifest["row_counts"]["by_form"] == dict(sorted(forms.items()))
    assert manifest["source"]["folded_duplicate_listings"] == listings - len(by_accession)
    [meta] = manifest["source"]["index_files"]
    assert (meta["kind"], meta["period"], meta["name"]) == (kind, "daily", path.name)
    assert meta["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("which", ["company", "form"])
def test_every_singly_listed_filing_keeps_its_company_name_form_and_cik(
    tmp_path: Path, which: str
) -> None:
    path, columns = (
        (_company_idx(), COMPANY_COLUMNS) if which == "company" else (_form_idx(), FORM_COLUMNS)
    )
    _, by_accession = _count(path, columns)
    _build(tmp_path / "rel", path)
    rows = {r["accession"]: r for r in Bundle.load(tmp_path / "rel").rows("main")}
    single = {acc: lines[0] for acc, lines in by_accession.items() if len(lines) == 1}
    assert len(single) > 1000
    for accession, line in single.items():
        row = rows[accession]
        assert row["issuer"] == _cell(line, columns, "company"), line
        assert row["form"] == _cell(line, columns, "form"), line
        assert row["cik"] == f"{int(_cell(line, columns, 'cik')):010d}", line
        day = _cell(line, columns, "date")
        assert row["partition_date"] == f"{day[:4]}-{day[4:6]}-{day[6:]}"
    # names and forms with spaces in them, cut at their column
    spaced = rows["0001104659-22-105194"] if which == "company" else None
    if spaced is not None:
        assert (spaced["issuer"], spaced["form"]) == (
            "A&Q Long/Short Strategies Fund LLC",
            "SC TO-I",
        )


# -- the same rows in the other layouts ---------------------------------------------------


def _quarterly_company(path: Path, out: Path) -> Path:
    """The real rows under a quarterly full-index header: titles on one line, ISO dates."""
    lines = _lines(path)
    start = next(n for n, line in enumerate(lines) if set(line.strip()) == {"-"}) + 1
    head = [
        "Description:           Master Index of EDGAR Dissemination Feed by Company Name",
        "Last Data Received:    December 31, 2022",
        "Comments:              webmaster@sec.gov",
        "Anonymous FTP:         ftp://ftp.sec.gov/edgar/",
        " ",
        " ",
        " ",
        " ",
        "Company Name".ljust(62) + "Form Type   CIK         Date Filed  File Name",
        "-" * 141,
    ]
    rows = []
    for line in lines[start:]:
        day = line[86:98].strip()
        rows.append(line[:86] + f"{day[:4]}-{day[4:6]}-{day[6:]}".ljust(12) + line[98:])
    out.write_text("\n".join(head + rows) + "\n", encoding="latin-1")
    return out


def _as_master(path: Path, out: Path) -> Path:
    """The real rows of the company.idx as a daily master.idx: pipe-delimited, CIK first."""
    body = ["Description:           Daily Index of EDGAR Dissemination Feed", ""]
    body += ["CIK|Company Name|Form Type|Date Filed|File Name", "-" * 80]
    for line in _lines(path):
        if ACCESSION.search(line):
            cells = [_cell(line, COMPANY_COLUMNS, k) for k in ("cik", "company", "form", "date")]
            body.append("|".join([cells[0], cells[1], cells[2], cells[3], line[98:].strip()]))
    out.write_text("\n".join(body) + "\n", encoding="latin-1")
    return out


def test_gzip_is_read_from_the_bytes_whatever_the_name(tmp_path: Path) -> None:
    plain = _company_idx()
    packed = tmp_path / "index.dat"  # no .gz in its name
    packed.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    _build(tmp_path / "plain", plain)
    manifest = _build(tmp_path / "gz", packed)
    assert _main(tmp_path / "gz") == _main(tmp_path / "plain")
    [meta] = manifest["source"]["index_files"]
    assert meta["kind"] == "company"
    assert meta["sha256"] == hashlib.sha256(packed.read_bytes()).hexdigest()


def test_the_quarterly_layout_of_the_same_rows_gives_the_same_rows(tmp_path: Path) -> None:
    quarterly = _quarterly_company(_company_idx(), tmp_path / "company.idx")
    _build(tmp_path / "daily", _company_idx())
    manifest = _build(tmp_path / "quarterly", quarterly)
    assert _main(tmp_path / "quarterly") == _main(tmp_path / "daily")
    [meta] = manifest["source"]["index_files"]
    assert (meta["kind"], meta["period"]) == ("company", "quarterly")


def test_master_idx_of_the_same_rows_gives_the_same_rows(tmp_path: Path) -> None:
    master = _as_master(_company_idx(), tmp_path / "master.20221003.idx")
    _build(tmp_path / "company", _company_idx())
    manifest = _build(tmp_path / "master", master)
    assert _main(tmp_path / "master") == _main(tmp_path / "company")
    assert manifest["source"]["index_files"][0]["kind"] == "master"


def _widened(path: Path, out: Path, form: tuple[int, int]) -> Path:
    """The rows with the form type column 17 wide under the same titles, as recent files
    write them, and SC 13G/A renamed SCHEDULE 13G/A (14 characters, wider than the old
    column)."""
    lines = _lines(path)
    start = next(n for n, line in enumerate(lines) if set(line.strip()) == {"-"}) + 1
    rows = []
    for line in lines[start:]:
        value = line[form[0] : form[1]].rstrip().replace("SC 13G/A", "SCHEDULE 13G/A")
        rows.append(line[: form[0]] + value.ljust(17) + line[form[1] :])
    out.write_text("\n".join(lines[:start] + rows) + "\n")
    return out


@pytest.mark.parametrize("which", ["company", "form"])
def test_a_form_column_wider_than_its_title_is_found_in_the_rows(
    tmp_path: Path, which: str
) -> None:
    path, columns = (
        (_company_idx(), COMPANY_COLUMNS) if which == "company" else (_form_idx(), FORM_COLUMNS)
    )
    wide = parse_index(_widened(path, tmp_path / f"{which}.idx", columns["form"]))
    renamed = [
        {**n, "form": "SCHEDULE 13G/A" if n["form"] == "SC 13G/A" else n["form"]}
        for n in parse_index(path)
    ]
    assert wide == renamed
    assert sum(1 for w in wide if w["form"] == "SCHEDULE 13G/A") >= 2


def test_a_column_that_starts_nowhere_every_row_agrees_is_refused(tmp_path: Path) -> None:
    lines = _lines(_form_idx())
    start = next(n for n, line in enumerate(lines) if set(line.strip()) == {"-"}) + 1
    lines[start + 40] = "   " + lines[start + 40]  # one row shifted right of the rest
    path = tmp_path / "form.idx"
    path.write_text("\n".join(lines) + "\n")
    _refused(tmp_path, [path], rf"form\.idx, line {start + 41}: the Company Name column")


# -- headers on their rows ----------------------------------------------------------------


def _field(text: str, label: str) -> str:
    m = re.search(rf"^\s*{label}:?\s*(.+?)\s*$", text, re.M)
    assert m, label
    return m[1]


def _header_rows(out: Path) -> tuple[Path, dict[str, dict[str, str]]]:
    """A daily company.idx listing each header's filing, with the header's own fields,
    under the real file's header block."""
    real = _lines(_company_idx())
    start = next(n for n, line in enumerate(real) if set(line.strip()) == {"-"}) + 1
    facts, rows = {}, []
    for path in _headers():
        text = path.read_text(encoding="latin-1")
        accession = path.name.removesuffix(".hdr.sgml")
        fact = {
            "stamp": _field(text, "<ACCEPTANCE-DATETIME>"),
            "form": _field(text, "CONFORMED SUBMISSION TYPE"),
            "cik": _field(text, "CENTRAL INDEX KEY"),
            "company": _field(text, "COMPANY CONFORMED NAME")[:60],
            "filed": _field(text, "FILED AS OF DATE"),
        }
        facts[accession] = fact
        name = f"edgar/data/{int(fact['cik'])}/{accession}.txt"
        rows.append(
            fact["company"].ljust(62)
            + fact["form"].ljust(12)
            + str(int(fact["cik"])).ljust(12)
            + fact["filed"].ljust(12)
            + name
        )
    out.write_text("\n".join(real[:start] + rows) + "\n")
    return out, facts


def _daylight_saving(moment: datetime) -> bool:
    """US daylight saving by the statute's rule (2007 on: second Sunday of March to the
    first Sunday of November; before: first Sunday of April to last Sunday of October)."""

    def sunday(year: int, month: int, nth: int) -> date:
        first = date(year, month, 1)
        return first + timedelta(days=(6 - first.weekday()) % 7 + 7 * (nth - 1))

    year = moment.year
    if year >= 2007:
        begins, ends = sunday(year, 3, 2), sunday(year, 11, 1)
    else:
        last = date(year, 10, 31)
        begins, ends = sunday(year, 4, 1), last - timedelta(days=(last.weekday() + 1) % 7)
    return (
        datetime.combine(begins, datetime.min.time()).replace(hour=2)
        <= moment
        < (datetime.combine(ends, datetime.min.time()).replace(hour=2))
    )


def test_real_headers_land_on_their_rows_in_new_york_time(tmp_path: Path) -> None:
    index, facts = _header_rows(tmp_path / "company.headers.idx")
    manifest = _build(tmp_path / "rel", _company_idx(), index, acceptance_files=_headers())
    assert len(facts) == 60
    rows = Bundle.load(tmp_path / "rel").rows("main")
    stamped = {r["accession"]: r for r in rows if r["acceptance_at"]}
    assert set(stamped) == set(facts)  # on their rows, and on no row of the daily index
    assert manifest["row_counts"]["acceptance_stamped"] == 60
    assert manifest["source"]["unmatched_acceptance"] == 0
    for accession, fact in facts.items():
        row = stamped[accession]
        at = datetime.fromisoformat(row["acceptance_at"])
        wall = datetime.strptime(fact["stamp"], "%Y%m%d%H%M%S")
        assert at.replace(tzinfo=None) == wall
        assert at.utcoffset() == timedelta(hours=-4 if _daylight_saving(wall) else -5), accession
        assert (
            row["partition_date"]
            == date.fromisoformat(
                f"{fact['filed'][:4]}-{fact['filed'][4:6]}-{fact['filed'][6:]}"
            ).isoformat()
        )
    # either side of the spring change of 2023 (12 March), and a late filing dated the
    # next business day
    assert stamped["0000072333-23-000015"]["acceptance_at"] == "2023-03-06T17:29:21-05:00"
    assert stamped["0000796343-23-000044"]["acceptance_at"] == "2023-03-15T16:06:36-04:00"
    late = stamped["0001493152-23-041369"]
    assert (late["acceptance_at"], late["partition_date"]) == (
        "2023-11-14T20:35:00-05:00",
        "2023-11-15",
    )


def test_a_full_submission_txt_gives_its_header_stamp_and_not_its_documents(
    tmp_path: Path,
) -> None:
    header = shared_path("data", "edgar", "headers", "0000320193-22-000061.hdr.sgml")
    submission = (
        "<SEC-DOCUMENT>0000320193-22-000061.txt : 20220506\n"
        + header.read_text()
        + "<DOCUMENT>\n<TYPE>4\n<TEXT>\n"
        # a document quoting another filing's header: not this filing's stamp
        + "ACCESSION NUMBER:\t\t0000320193-22-000061\n<ACCEPTANCE-DATETIME>20220101090000\n"
        + "ACCESSION NUMBER:\t\t0000000001-22-000001\n"
        + "</TEXT>\n</DOCUMENT>\n</SEC-DOCUMENT>\n"
    )
    path = tmp_path / "0000320193-22-000061.txt.gz"
    path.write_bytes(gzip.compress(submission.encode(), mtime=0))
    assert parse_acceptance(path) == {"0000320193-22-000061": "2022-05-06T18:30:57-04:00"}


# -- the submissions JSON -----------------------------------------------------------------


def _stamps(names: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in names:
        found.update(parse_acceptance(shared_path("data", "edgar", "headers", f"{name}.hdr.sgml")))
    return found


def _submissions(path: Path, stamps: dict[str, str], *, utc: bool) -> Path:
    """A submissions JSON as the SEC writes it: every time with a Z, the digits New York
    time for some filers and UTC for others."""
    values = []
    for at in stamps.values():
        moment = datetime.fromisoformat(at)
        if utc:
            moment = moment.astimezone(UTC)
        values.append(moment.strftime("%Y-%m-%dT%H:%M:%S.000Z"))
    recent = {
        "accessionNumber": list(stamps),
        "acceptanceDateTime": values,
        "form": ["8-K"] * len(values),
    }
    path.write_text(json.dumps({"cik": "0000000001", "filings": {"recent": recent}}))
    return path


MORNING = ["0001641172-25-001350", "0001193125-25-066253"]  # 06:00 and 07:32 New York
EVENING = ["0001493152-23-041369"]  # 20:35 New York: 01:35 UTC the next day
MIDDAY = ["0000066740-24-000023", "0001193125-23-048785", "0001104659-25-064107"]


@pytest.mark.parametrize(("utc", "names"), [(False, MORNING + MIDDAY), (True, EVENING + MIDDAY)])
def test_submissions_json_is_read_by_the_convention_its_own_stamps_show(
    tmp_path: Path, utc: bool, names: list[str]
) -> None:
    expected = _stamps(names)
    path = _submissions(tmp_path / "CIK0000000001.json", expected, utc=utc)
    assert parse_acceptance(path) == expected


def test_submissions_json_whose_stamps_tell_nothing_is_refused(tmp_path: Path) -> None:
    path = _submissions(tmp_path / "CIK0000000001.json", _stamps(MIDDAY), utc=False)
    with pytest.raises(ReleaseError, match=r"CIK0000000001\.json: none of its 3 .*headers"):
        parse_acceptance(path)


def test_submissions_json_mixing_conventions_is_refused(tmp_path: Path) -> None:
    new_york = _stamps(MORNING)
    path = _submissions(tmp_path / "a.json", new_york, utc=False)
    body = json.loads(path.read_text())
    recent = body["filings"]["recent"]
    evening = _stamps(EVENING)
    recent["accessionNumber"] += list(evening)
    utc = datetime.fromisoformat(next(iter(evening.values()))).astimezone(UTC)
    recent["acceptanceDateTime"].append(utc.strftime("%Y-%m-%dT%H:%M:%S.000Z"))
    path.write_text(json.dumps(body))
    with pytest.raises(
        ReleaseError, match=rf"New York time for {MORNING[0]} and UTC for {EVENING[0]}"
    ):
        parse_acceptance(path)


def test_a_json_time_that_disagrees_with_the_filing_header_is_refused(tmp_path: Path) -> None:
    stamps = _stamps(MORNING + MIDDAY)
    wrong = dict(stamps)
    moved = datetime.fromisoformat(wrong[MIDDAY[0]]) + timedelta(hours=1)
    wrong[MIDDAY[0]] = moved.isoformat()
    path = _submissions(tmp_path / "CIK.json", wrong, utc=False)
    header = shared_path("data", "edgar", "headers", f"{MIDDAY[0]}.hdr.sgml")
    index, _ = _header_rows(tmp_path / "company.idx")
    with pytest.raises(ReleaseError, match=rf"CIK\.json, .*accession {MIDDAY[0]} was already"):
        _build(tmp_path / "rel", index, acceptance_files=[header, path])
    assert not (tmp_path / "rel").exists()


def test_a_filing_folders_index_json_is_refused_with_what_to_give(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    path.write_text(json.dumps({"directory": {"item": [], "name": "/Archives/edgar/data/1/1"}}))
    with pytest.raises(
        ReleaseError, match=r"index\.json: a filing folder's index\.json .*hdr\.sgml"
    ):
        parse_acceptance(path)


# -- hostile files ------------------------------------------------------------------------


def _refused(tmp_path: Path, index: list[Path], says: str, **kwargs: Any) -> None:
    called = []

    def secret() -> bytes:
        called.append(True)
        return SECRET

    with pytest.raises(ReleaseError, match=says):
        build_release(
            tmp_path / "rel", index_files=index, name="x", row_key_secret=secret, **kwargs
        )
    assert not (tmp_path / "rel").exists() and not called  # nothing written, no secret made


def test_a_truncated_index_is_refused_at_its_last_line(tmp_path: Path) -> None:
    data = _company_idx().read_bytes()
    cut = data[: data.index(b"\n", 200_000) + 60]  # 60 bytes into a row
    path = tmp_path / "company.20221003.idx"
    path.write_bytes(cut)
    line = cut.count(b"\n") + 1
    _refused(tmp_path, [path], rf"company\.20221003\.idx, line {line}: .*cut short")


def test_a_truncated_gzip_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "company.idx.gz"
    path.write_bytes(gzip.compress(_company_idx().read_bytes(), mtime=0)[:-5000])
    _refused(tmp_path, [path], r"company\.idx\.gz: the gzip stream ends early")


@pytest.mark.parametrize("fields", [4, 6])
def test_a_master_idx_row_with_the_wrong_column_count_is_refused(
    tmp_path: Path, fields: int
) -> None:
    master = _as_master(_company_idx(), tmp_path / "master.idx")
    lines = master.read_text(encoding="latin-1").splitlines()
    cells = lines[300].split("|")
    lines[300] = "|".join(cells[:4] if fields == 4 else [*cells, "extra"])
    master.write_text("\n".join(lines) + "\n", encoding="latin-1")
    _refused(
        tmp_path,
        [master],
        rf"master\.idx, line 301: expected 5 '\|'-separated fields.*found {fields}",
    )


SEC_REFUSAL = (
    "<html><body>Your Request Originates from an Undeclared Automated Tool</body></html>\n"
)
CRAWLER = (
    "Description:           Daily Index of EDGAR Dissemination Feed by Company Name\n\n"
    + "Company Name".ljust(62)
    + "Form Type   CIK         Date Filed  URL\n"
    + "-" * 141
    + "\n"
)
XBRL = (
    "Description:           XBRL Index of EDGAR Dissemination Feed\n\n"
    "CIK|Company Name|Form Type|Date Filed|Filename\n"
)
OTHER_KINDS = {
    "header": ("HEADER", r"line 1: a filing header, not an index file"),
    "json": (json.dumps({"filings": {"recent": {}}}), r"line 1: a JSON document"),
    "sec-refusal-page": (SEC_REFUSAL, r"line 1: a web page, not an index file"),
    "crawler": (CRAWLER, r"line 3: columns .*URL.* are not those of master\.idx"),
    "xbrl": (XBRL, r"line 1: an XBRL index"),
    "text": ("just some text\nwith no titles\n", r"line 2: end of file without the column"),
    "empty": ("", r"line 1: the file is empty"),
}


@pytest.mark.parametrize("kind", list(OTHER_KINDS))
def test_a_file_of_another_kind_is_refused_as_an_index(tmp_path: Path, kind: str) -> None:
    body, says = OTHER_KINDS[kind]
    if body == "HEADER":
        body = shared_path("data", "edgar", "headers", "0000320193-22-000061.hdr.sgml").read_text()
    path = tmp_path / "company.idx"
    path.write_text(body)
    _refused(tmp_path, [path], rf"company\.idx, {says}")


def test_an_index_given_as_headers_is_refused(tmp_path: Path) -> None:
    _refused(
        tmp_path,
        [_company_idx()],
        r"form\.20200318\.idx, line 4094: .*an EDGAR index file: it goes to --edgar-index",
        acceptance_files=[_form_idx()],
    )


# -- tickers ------------------------------------------------------------------------------


def test_the_secs_company_tickers_json_is_a_tickers_file(tmp_path: Path) -> None:
    path = tmp_path / "company_tickers.json"
    path.write_text(
        json.dumps(
            {
                "0": {"cik_str": 320193, "ticker": "AAPL", "title": "Apple Inc."},
                "1": {"cik_str": 1652044, "ticker": "GOOGL", "title": "Alphabet Inc."},
                "2": {"cik_str": 1652044, "ticker": "GOOG", "title": "Alphabet Inc."},
            }
        )
    )
    assert read_tickers(path) == {"0000320193": "AAPL", "0001652044": "GOOGL"}
    plain = tmp_path / "tickers.json"
    plain.write_text(json.dumps({"320193": "AAPL", "0001652044": "GOOGL"}))
    assert read_tickers(plain) == read_tickers(path)


@pytest.mark.parametrize(
    "body",
    ['["AAPL"]', '{"AAPL": "320193"}', '{"0": {"ticker": "AAPL"}}', '{"320193": 7}', "not json"],
)
def test_a_tickers_file_of_another_shape_is_refused(tmp_path: Path, body: str) -> None:
    path = tmp_path / "tickers.json"
    path.write_text(body)
    with pytest.raises(ReleaseError, match=r"tickers\.json"):
        read_tickers(path)


# -- progress -----------------------------------------------------------------------------


def test_build_reports_progress_per_segment_not_per_row(tmp_path: Path) -> None:
    heard: list[tuple[int, int]] = []
    manifest = _build(
        tmp_path / "rel", _company_idx(), on_progress=lambda d, t: heard.append((d, t))
    )
    rows = manifest["row_counts"]["total"]
    assert heard[0] == (0, 0) and heard[-1] == (rows, rows)
    done = [d for d, t in heard[1:]]
    assert done == sorted(done) and len(heard) < rows / 5
    assert all(t == rows for _, t in heard[1:])


def test_parse_index_reads_every_kind(tmp_path: Path) -> None:
    company = parse_index(_company_idx())
    master = parse_index(_as_master(_company_idx(), tmp_path / "master.idx"))
    assert len(company) == len(master) == 4925
    assert [c["accession"] for c in company] == [m["accession"] for m in master]


def test_a_folder_of_headers_builds_the_release_its_files_build(tmp_path: Path) -> None:
    from harness.cli import main

    index, _ = _header_rows(tmp_path / "company.headers.idx")
    folder = shared_path("data", "edgar", "headers")
    common = ["release", "build", "--edgar-index", str(_company_idx()), str(index),
              "--row-key-secret", str(tmp_path / "secret"), "--name", "edgar-real"]  # fmt: skip
    assert main([*common, "--acceptance", str(folder), "--out", str(tmp_path / "a")]) == 0
    listed = [str(p) for p in _headers()]
    assert main([*common, "--acceptance", *listed, "--out", str(tmp_path / "b")]) == 0
    a, b = (Bundle.load(tmp_path / name).manifest for name in ("a", "b"))
    assert a["row_counts"]["acceptance_stamped"] == 60
    assert a["content_digest"] == b["content_digest"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([*common, "--acceptance", str(empty), "--out", str(tmp_path / "c")]) == 2
    assert not (tmp_path / "c").exists()
