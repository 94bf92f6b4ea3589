"""The synthetic release generator and the on-disk release it writes.

Calendar facts used as the oracle are written out here, not taken from the code
under test: EDGAR is open on weekdays that are not US federal holidays, and a
filing (other than Forms 3, 4, 5 and 144) transmitted after 17:30 New York time
takes the next EDGAR business day's date.
"""

import json
import shutil
from collections import Counter
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from harness.release.bundle import Bundle
from harness.release.store import INDEX, MANIFEST, ReleaseError
from harness.release.synth import synth_release

NY = ZoneInfo("America/New_York")
ARMS = ("main", "redacted", "shifted")
FILES = ("main.jsonl", "redacted.jsonl", "shifted.jsonl", "index.json", "manifest.json")
INSIDER_FORMS = {"3", "4", "5", "144"}

# The main release: seven months, 20k rows, a quarter of them stamped.
START, END = date(2022, 10, 1), date(2023, 4, 30)
ROWS = 20_000
FRACTION = 0.25
# US federal holidays (observed) inside START..END, from the OPM calendar.
FEDERAL_HOLIDAYS = {
    date(2022, 10, 10),  # Columbus Day
    date(2022, 11, 11),  # Veterans Day
    date(2022, 11, 24),  # Thanksgiving
    date(2022, 12, 26),  # Christmas (25th is a Sunday)
    date(2023, 1, 2),  # New Year's Day (1st is a Sunday)
    date(2023, 1, 16),  # Martin Luther King Jr. Day
    date(2023, 2, 20),  # Washington's Birthday
}


def _edgar_open(day: date) -> bool:
    assert START - timedelta(days=7) <= day <= END + timedelta(days=14), "outside holiday table"
    return day.weekday() < 5 and day not in FEDERAL_HOLIDAYS


def _next_edgar_day(day: date) -> date:
    day += timedelta(days=1)
    while not _edgar_open(day):
        day += timedelta(days=1)
    return day


def _read(root: Path, arm: str = "main") -> list[dict[str, Any]]:
    with open(root / f"{arm}.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _local(row: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(row["acceptance_at"]).astimezone(NY)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big") / "release"
    synth_release(root, start=START, end=END, seed=7, rows=ROWS, acceptance_fraction=FRACTION)
    return root


@pytest.fixture(scope="module")
def big_rows(big: Path) -> list[dict[str, Any]]:
    return _read(big)


@pytest.fixture(scope="module")
def stamped(big_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in big_rows if r["acceptance_at"] is not None]


SMALL = {"start": date(2022, 11, 1), "end": date(2022, 12, 31), "rows": 2000}


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("twins")
    for name, seed in (("a", 3), ("b", 3), ("other", 4)):
        synth_release(base / name, seed=seed, acceptance_fraction=0.3, **SMALL)
    return base / "a", base / "b", base / "other"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release that tamper tests copy before altering."""
    root = tmp_path_factory.mktemp("pristine") / "release"
    synth_release(
        root,
        start=date(2023, 1, 2),
        end=date(2023, 3, 31),
        seed=21,
        rows=4000,
        acceptance_fraction=0.1,
    )
    return root


@pytest.fixture
def copy(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(pristine, tmp_path / "release"))


# -- determinism -------------------------------------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_same_arguments_write_byte_identical_files(
    twins: tuple[Path, Path, Path], name: str
) -> None:
    a, b, _ = twins
    assert (a / name).read_bytes() == (b / name).read_bytes()


def test_another_seed_gives_another_content_digest(twins: tuple[Path, Path, Path]) -> None:
    a, _, other = twins
    digest = json.loads((a / MANIFEST).read_text())["content_digest"]
    assert json.loads((other / MANIFEST).read_text())["content_digest"] != digest


# -- the mix of forms and dates ---------------------------------------------------------


@pytest.mark.parametrize("form", ["4", "8-K", "10-Q", "10-K", "SC 13G", "S-1"])
def test_realistic_form_is_present_in_a_20k_row_release(
    big_rows: list[dict[str, Any]], form: str
) -> None:
    assert any(r["form"] == form for r in big_rows)


def test_form_4_is_the_most_common_form(big_rows: list[dict[str, Any]]) -> None:
    counts = Counter(r["form"] for r in big_rows)
    assert counts.most_common(1)[0][0] == "4"


def test_every_partition_date_lies_in_the_window(big_rows: list[dict[str, Any]]) -> None:
    outside = [r for r in big_rows if not START <= date.fromisoformat(r["partition_date"]) <= END]
    assert outside == []


def test_a_few_partition_dates_fall_on_weekends_or_federal_holidays(
    big_rows: list[dict[str, Any]],
) -> None:
    closed = [r for r in big_rows if not _edgar_open(date.fromisoformat(r["partition_date"]))]
    # "a few": present, but well under 1% of a realistic release.
    assert 0 < len(closed) < ROWS // 100


def test_acceptance_stamps_cover_about_the_requested_fraction(
    stamped: list[dict[str, Any]],
) -> None:
    # Binomial(20000, 0.25): sd = sqrt(20000 * 0.25 * 0.75) ~ 61 rows ~ 0.0031 of the
    # fraction; a late filing on the window's last day loses its stamp (a handful of
    # rows). 0.015 is ~5 sd: a fixed seed will not stray, a wrong fraction will.
    assert abs(len(stamped) / ROWS - FRACTION) < 0.015


@pytest.mark.parametrize(
    "bucket",
    ["pre-open", "exactly 09:30:00", "intraday", "after 17:30"],
)
def test_stamped_rows_include_every_acceptance_time_bucket(
    stamped: list[dict[str, Any]], bucket: str
) -> None:
    def in_bucket(at: time) -> bool:
        if bucket == "pre-open":
            return at < time(9, 30)
        if bucket == "exactly 09:30:00":
            return at == time(9, 30, 0)
        if bucket == "intraday":
            return time(9, 30) < at < time(16, 0)
        return at > time(17, 30)

    assert any(in_bucket(_local(r).time()) for r in stamped)


def test_acceptance_stamps_carry_the_new_york_offset(stamped: list[dict[str, Any]]) -> None:
    wrong = [
        r["acceptance_at"]
        for r in stamped
        if datetime.fromisoformat(r["acceptance_at"]).utcoffset()
        != _local(r).utcoffset()  # -05:00 in winter, -04:00 from the second Sunday of March
    ]
    assert wrong == []


def _late_non_insider(stamped: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        r for r in stamped if r["form"] not in INSIDER_FORMS and _local(r).time() > time(17, 30)
    ]


def test_late_non_insider_filing_is_dated_next_edgar_business_day(
    stamped: list[dict[str, Any]],
) -> None:
    late = _late_non_insider(stamped)
    assert late
    wrong = [
        r
        for r in late
        if date.fromisoformat(r["partition_date"]) != _next_edgar_day(_local(r).date())
    ]
    assert wrong == []


def test_late_insider_filing_keeps_its_acceptance_date(stamped: list[dict[str, Any]]) -> None:
    late = [r for r in stamped if r["form"] in INSIDER_FORMS and time(17, 30) < _local(r).time()]
    assert late
    wrong = [r for r in late if r["partition_date"] != _local(r).date().isoformat()]
    assert wrong == []


def test_filing_accepted_by_1730_keeps_its_acceptance_date(stamped: list[dict[str, Any]]) -> None:
    early = [r for r in stamped if _local(r).time() <= time(17, 30)]
    wrong = [r for r in early if r["partition_date"] != _local(r).date().isoformat()]
    assert wrong == []


@pytest.fixture(scope="module")
def holiday_eves(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Every row stamped, over the autumn federal holidays (of 2023: the seed's release,
    and so a synthetic one, has no stamps in November 2022)."""
    root = tmp_path_factory.mktemp("eves") / "release"
    synth_release(
        root,
        start=date(2023, 10, 2),
        end=date(2023, 11, 30),
        seed=5,
        rows=4000,
        acceptance_fraction=1.0,
    )
    return [r for r in _read(root) if r["acceptance_at"] is not None]


@pytest.mark.parametrize(
    ("eve", "expected"),
    [
        (date(2023, 10, 6), date(2023, 10, 10)),  # Fri; Mon is Columbus Day (NYSE open)
        (date(2023, 11, 9), date(2023, 11, 13)),  # Thu; Fri is Veterans Day observed (NYSE open)
        (date(2023, 11, 22), date(2023, 11, 24)),  # Wed; Thu is Thanksgiving
    ],
)
def test_late_filing_on_eve_of_edgar_holiday_skips_the_holiday(
    holiday_eves: list[dict[str, Any]], eve: date, expected: date
) -> None:
    late = [r for r in _late_non_insider(holiday_eves) if _local(r).date() == eve]
    assert late
    assert {r["partition_date"] for r in late} == {expected.isoformat()}


def test_acceptance_fraction_zero_gives_no_stamps(tmp_path: Path) -> None:
    synth_release(
        tmp_path / "r",
        start=date(2023, 1, 2),
        end=date(2023, 1, 31),
        seed=1,
        rows=2000,
        acceptance_fraction=0.0,
    )
    assert [r for r in _read(tmp_path / "r") if r["acceptance_at"] is not None] == []


def test_published_at_equals_partition_date(big_rows: list[dict[str, Any]]) -> None:
    assert [r for r in big_rows if r["published_at"] != r["partition_date"]] == []


# -- Bundle.load: narrowing -----------------------------------------------------------------

NARROW = {"forms": ["8-K", "10-Q"], "start": "2022-11-01", "end": "2022-12-15"}


def test_narrow_load_returns_exactly_the_matching_rows(
    big: Path, big_rows: list[dict[str, Any]]
) -> None:
    bundle = Bundle.load(big, **NARROW)
    expected = [
        r["row_key"]
        for r in big_rows
        if r["form"] in NARROW["forms"] and NARROW["start"] <= r["partition_date"] <= NARROW["end"]
    ]
    assert expected
    assert [r["row_key"] for r in bundle.rows("main")] == expected


def test_narrow_load_rows_match_the_file_rows(big: Path, big_rows: list[dict[str, Any]]) -> None:
    by_key = {r["row_key"]: r for r in big_rows}
    rows = Bundle.load(big, **NARROW).rows("main")
    assert all(r == by_key[r["row_key"]] for r in rows)


def test_the_three_arms_share_an_order_and_no_row_key(big: Path) -> None:
    bundle = Bundle.load(big, **NARROW)
    keys = {arm: bundle.row_keys(arm) for arm in ARMS}
    assert keys["main"] and len({len(k) for k in keys.values()}) == 1
    assert not set(keys["main"]) & set(keys["redacted"])
    assert not set(keys["main"]) & set(keys["shifted"])
    assert not set(keys["redacted"]) & set(keys["shifted"])
    # the join is the order: the n-th row of each arm is the same filing
    join = bundle.to_main("shifted")
    main = {r["row_key"]: r for r in bundle.rows("main")}
    for row in bundle.rows("shifted")[:50]:
        assert main[join[row["row_key"]]]["form"] == row["form"]
        assert main[join[row["row_key"]]]["partition_date"][4:] == row["partition_date"][4:]


def test_load_without_arguments_returns_every_row(big: Path) -> None:
    assert len(Bundle.load(big).rows("main")) == ROWS


def test_unknown_form_is_refused_by_name(big: Path) -> None:
    with pytest.raises(ReleaseError, match=r"form\(s\) 10-KSB not in release"):
        Bundle.load(big, forms=["8-K", "10-KSB"])


def test_start_after_end_is_refused(big: Path) -> None:
    with pytest.raises(ReleaseError, match="start 2023-02-01 is after end 2023-01-01"):
        Bundle.load(big, start="2023-02-01", end="2023-01-01")


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2021-01-01", "2021-12-31"),
        ("2023-05-01", "2023-06-30"),
        ("2022-09-15", "2022-10-15"),  # partly outside: still refused
        ("2023-04-15", "2023-05-15"),
    ],
)
def test_a_window_not_inside_the_release_is_refused(big: Path, start: str, end: str) -> None:
    with pytest.raises(ReleaseError) as info:
        Bundle.load(big, start=start, end=end)
    assert f"window {start}..{end} is not inside release" in str(info.value)
    assert "(2022-10-01..2023-04-30)" in str(info.value)


@pytest.mark.parametrize("value", ["20230301", "2023-3-1", "2023-03-01T00:00:00"])
def test_bundle_days_are_strictly_yyyy_mm_dd(big: Path, value: str) -> None:
    with pytest.raises(ReleaseError, match="not a date"):
        Bundle.load(big, start=value)
    with pytest.raises(ReleaseError, match="datetime"):
        Bundle.load(big, start=datetime(2023, 3, 1))


def test_start_that_is_not_a_date_is_refused(big: Path) -> None:
    with pytest.raises(ReleaseError, match="not a date"):
        Bundle.load(big, start="2023-13-01")


# -- Bundle.load: tampering -------------------------------------------------------------------


def _segments(root: Path) -> list[dict[str, Any]]:
    return list(json.loads((root / INDEX).read_bytes())["segments"])


def _flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    # Swap one ASCII letter/digit for another: same size, still valid UTF-8.
    data[offset] = ord("x") if data[offset] != ord("x") else ord("y")
    path.write_bytes(bytes(data))


def _middle(segment: dict[str, Any], arm: str) -> int:
    offset, length, _sha = segment[arm]
    return int(offset + length // 2)


@pytest.mark.parametrize("arm", ARMS)
def test_altered_byte_in_a_read_segment_is_refused_naming_the_arm_file(
    copy: Path, arm: str
) -> None:
    segment = next(s for s in _segments(copy) if s["date"] == "2023-02-01" and s["form"] == "4")
    _flip_byte(copy / f"{arm}.jsonl", _middle(segment, arm))
    bundle = Bundle.load(copy, forms=["4"], start="2023-02-01", end="2023-02-01")
    with pytest.raises(ReleaseError, match=rf"^{arm}\.jsonl: segment 2023-02-01 4 "):
        bundle.rows(arm)


def test_altered_manifest_without_new_digest_is_refused(copy: Path) -> None:
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["provenance"] = "real EDGAR filings, honestly"
    (copy / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    with pytest.raises(ReleaseError, match="content_digest does not match"):
        Bundle.load(copy)


@pytest.mark.parametrize("name", ["shifted.jsonl", "index.json"])
def test_file_of_another_size_is_refused_naming_the_file(copy: Path, name: str) -> None:
    with open(copy / name, "ab") as handle:
        handle.write(b"\n")
    with pytest.raises(ReleaseError, match=rf"^{name}: \d+ bytes on disk"):
        Bundle.load(copy)


def test_missing_arm_file_is_refused_naming_the_file(copy: Path) -> None:
    (copy / "redacted.jsonl").unlink()
    with pytest.raises(ReleaseError, match=r"^redacted\.jsonl: missing"):
        Bundle.load(copy)


def test_altered_index_of_same_size_is_refused(copy: Path) -> None:
    index = (copy / INDEX).read_bytes()
    position = index.index(b'"date":"2023-01-') + len(b'"date":"2023-01-')
    _flip_byte(copy / INDEX, position)  # a digit of a segment's date becomes a letter
    with pytest.raises(ReleaseError, match=r"^index\.json: sha256 does not match"):
        Bundle.load(copy)


def test_check_reports_altered_byte_in_a_segment_the_load_did_not_read(copy: Path) -> None:
    outside = next(s for s in _segments(copy) if s["date"] == "2023-03-01" and s["form"] == "8-K")
    _flip_byte(copy / "shifted.jsonl", _middle(outside, "shifted"))
    bundle = Bundle.load(copy, forms=["4"], start="2023-01-03", end="2023-01-31")
    for arm in ARMS:
        bundle.rows(arm)  # the narrowed load never reads the altered bytes
    problems = bundle.check()
    assert len(problems) == 1
    assert problems[0].startswith("shifted.jsonl: sha256 ")


def test_check_of_an_intact_release_is_empty(pristine: Path) -> None:
    assert Bundle.load(pristine).check() == []


def test_stamps_are_exactly_the_fraction_and_none_in_november_2022(tmp_path: Path) -> None:
    synth_release(
        tmp_path / "r", start=date(2022, 11, 1), end=date(2023, 1, 31), seed=7, rows=9000,
        acceptance_fraction=0.1,
    )  # fmt: skip
    rows = _read(tmp_path / "r")
    stamped = [r for r in rows if r["acceptance_at"]]
    assert len(stamped) == 900
    assert not [r for r in stamped if r["partition_date"] < "2022-12-01"]
    november = [r for r in rows if r["partition_date"] < "2022-12-01"]
    assert november  # rows there, but none stamped: pit and dump agree by construction
