"""The two control arms: redacted (no filer identity) and shifted (+10 years)."""

import json
import re
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.release.arms import derive, redacted_row, shift_date, shift_iso, shifted_row
from harness.release.synth import synth_release

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
ACCESSION = re.compile(r"^(\d{10})-(\d{2})-(\d{6})$")
TRUST_YEAR = re.compile(r"Trust(?: \d+)? (\d{4})-[A-D]$")


@pytest.fixture(scope="module")
def arms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """A release across a new year and the 2024 leap day, half the rows stamped."""
    root = tmp_path_factory.mktemp("arms") / "release"
    synth_release(
        root,
        start=date(2023, 12, 1),
        end=date(2024, 3, 29),
        seed=11,
        rows=10_000,
        acceptance_fraction=0.5,
    )
    out = {}
    for arm in ("main", "redacted", "shifted"):
        with open(root / f"{arm}.jsonl", encoding="utf-8") as handle:
            out[arm] = [json.loads(line) for line in handle]
    return out


def _pairs(
    arms: dict[str, list[dict[str, Any]]], arm: str
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    assert len(arms[arm]) == len(arms["main"])
    return list(zip(arms["main"], arms[arm], strict=True))


def _plus_ten(day: date) -> date:
    """First principles: same month and day ten years on; 29 Feb becomes 28 Feb."""
    if (day.month, day.day) == (2, 29):
        return date(day.year + 10, 2, 28)
    return date(day.year + 10, day.month, day.day)


def _texts(row: dict[str, Any], skip: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in row.items() if k not in skip and isinstance(v, str)]


# Fields the arms keep by design: row_key is an opaque hash (the join key) and form a
# fixed vocabulary (a ticker such as "SC" could otherwise "appear" in "SC 13G").
KEPT = ("row_key", "form")


# -- redacted -----------------------------------------------------------------------


@pytest.mark.parametrize("control", ["redacted", "shifted"])
def test_a_control_arm_has_its_own_row_keys_joined_to_main_by_order(
    arms: dict[str, list[dict[str, Any]]], control: str
) -> None:
    """Keys differ per arm (a table built from a public main-arm trajectory names no
    control row), and the n-th row of each arm is one filing."""
    main_keys = [r["row_key"] for r in arms["main"]]
    control_keys = [r["row_key"] for r in arms[control]]
    assert len(control_keys) == len(set(control_keys)) == len(main_keys)
    assert not set(control_keys) & set(main_keys)
    assert [r["form"] for r in arms[control]] == [r["form"] for r in arms["main"]]


def test_redacted_rows_never_contain_the_issuer_name(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    leaks = [
        (main["row_key"], key)
        for main, red in _pairs(arms, "redacted")
        for key, value in _texts(red, KEPT)
        if main["issuer"].lower() in value.lower()
    ]
    assert leaks == []


def test_redacted_rows_never_contain_the_cik_digits(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    # The unpadded digits are a substring of the padded CIK: one test covers both.
    leaks = [
        (main["row_key"], key, value)
        for main, red in _pairs(arms, "redacted")
        for key, value in _texts(red, KEPT)
        if main["cik"].lstrip("0") in value
    ]
    assert leaks == []


def test_redacted_rows_never_contain_the_ticker_as_a_word(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    with_ticker = [(m, r) for m, r in _pairs(arms, "redacted") if m["ticker"]]
    assert with_ticker
    leaks = [
        (main["row_key"], key, value)
        for main, red in with_ticker
        for key, value in _texts(red, KEPT)
        if re.search(rf"\b{re.escape(main['ticker'])}\b", value, re.IGNORECASE)
    ]
    assert leaks == []


def test_redacted_rows_drop_issuer_cik_ticker_and_filename(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    kept = [
        r["row_key"]
        for r in arms["redacted"]
        if any(r[k] is not None for k in ("issuer", "cik", "ticker", "filename"))
    ]
    assert kept == []


def test_redacted_accession_prefix_is_zeros_and_rest_kept(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    for main, red in _pairs(arms, "redacted"):
        _prefix, yy, seq = ACCESSION.match(main["accession"]).groups()  # type: ignore[union-attr]
        assert red["accession"] == f"0000000000-{yy}-{seq}"


def test_redacted_keeps_dates_and_form(arms: dict[str, list[dict[str, Any]]]) -> None:
    fields = ("form", "partition_date", "published_at", "acceptance_at")
    changed = [
        m["row_key"] for m, r in _pairs(arms, "redacted") if any(m[f] != r[f] for f in fields)
    ]
    assert changed == []


def test_redaction_catches_unpadded_cik_and_any_case_ticker_in_free_text() -> None:
    row = {
        "row_key": "r-1",
        "form": "8-K",
        "issuer": "Apex Energy Inc.",
        "cik": "0000320193",
        "ticker": "APX",
        "title": "8-K - APEX ENERGY INC. cik 320193, ticker apx (APX.) 0000320193",
    }
    title = redacted_row(row)["title"]
    assert "320193" not in title
    assert not re.search(r"\bapx\b", title, re.IGNORECASE)
    assert "apex energy inc." not in title.lower()


def test_redaction_leaves_longer_numbers_and_words_containing_the_ticker() -> None:
    row = {
        "row_key": "r-1",
        "form": "8-K",
        "issuer": "Apex Energy Inc.",
        "cik": "0000320193",
        "ticker": "APX",
        "title": "order 13201930 by APXX",
    }
    assert redacted_row(row)["title"] == "order 13201930 by APXX"


# -- shifted ------------------------------------------------------------------------


def test_shifted_forms_match_main(arms: dict[str, list[dict[str, Any]]]) -> None:
    changed = [m["row_key"] for m, s in _pairs(arms, "shifted") if m["form"] != s["form"]]
    assert changed == []


@pytest.mark.parametrize("field", ["partition_date", "published_at"])
def test_shifted_dates_are_exactly_ten_years_later(
    arms: dict[str, list[dict[str, Any]]], field: str
) -> None:
    wrong = [
        (m[field], s[field])
        for m, s in _pairs(arms, "shifted")
        if s[field] != _plus_ten(date.fromisoformat(m[field])).isoformat()
    ]
    assert wrong == []


def test_shifted_leap_day_becomes_28_february(arms: dict[str, list[dict[str, Any]]]) -> None:
    leap = [s for m, s in _pairs(arms, "shifted") if m["partition_date"] == "2024-02-29"]
    assert leap
    assert {s["partition_date"] for s in leap} == {"2034-02-28"}


def test_shifted_acceptance_keeps_wall_time_and_offset(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    stamped = [(m, s) for m, s in _pairs(arms, "shifted") if m["acceptance_at"]]
    assert stamped
    for main, shifted in stamped:
        before = datetime.fromisoformat(main["acceptance_at"])
        after = datetime.fromisoformat(shifted["acceptance_at"])
        assert after.date() == _plus_ten(before.date())
        assert after.time() == before.time()
        assert after.utcoffset() == before.utcoffset()


def test_shifted_acceptance_on_leap_day_moves_to_28_february() -> None:
    assert shift_iso("2024-02-29T18:05:01-05:00") == "2034-02-28T18:05:01-05:00"


def test_shifted_titles_carry_no_original_iso_date(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    leaks = []
    for main, shifted in _pairs(arms, "shifted"):
        originals = set(ISO_DATE.findall(main["title"])) | {main["partition_date"]}
        if main["acceptance_at"]:
            originals.add(main["acceptance_at"][:10])
        leaks += [(d, shifted["title"]) for d in originals if d in shifted["title"]]
    assert leaks == []


def test_shifted_rows_carry_no_real_year_digits(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    """No field but cik and row_key names the real year. CIK digits (of the issuer and
    of the filer agent in the accession prefix) are identifiers, not dates, and are
    blanked before searching: a CIK such as 1202389 contains "2023" by chance."""
    leaks = []
    for main, shifted in _pairs(arms, "shifted"):
        years = {main["partition_date"][:4]}
        if main["acceptance_at"]:
            years.add(main["acceptance_at"][:4])
        ids = {main["cik"], main["cik"].lstrip("0"), main["accession"][:10]}
        for key, value in _texts(shifted, ("cik", "row_key")):
            for ident in sorted(ids, key=len, reverse=True):
                value = value.replace(ident, "#")
            leaks += [(key, shifted[key], y) for y in years if y in value]
    assert leaks == []


def test_shifted_accession_year_digits_move_ten_mod_100(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    for main, shifted in _pairs(arms, "shifted"):
        prefix, yy, seq = ACCESSION.match(main["accession"]).groups()  # type: ignore[union-attr]
        assert shifted["accession"] == f"{prefix}-{(int(yy) + 10) % 100:02d}-{seq}"


@pytest.mark.parametrize(("yy", "expected"), [("95", "05"), ("99", "09"), ("89", "99")])
def test_accession_year_digits_wrap_past_the_century(yy: str, expected: str) -> None:
    row = {"row_key": "r-1", "form": "4", "accession": f"0000950170-{yy}-000123"}
    assert shifted_row(row)["accession"] == f"0000950170-{expected}-000123"


def test_shifted_filename_carries_the_shifted_accession(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    wrong = [
        s["filename"]
        for _m, s in _pairs(arms, "shifted")
        if not s["filename"].endswith(f"/{s['accession']}.txt")
    ]
    assert wrong == []


def test_shifted_issuer_year_of_synthetic_trusts_is_shifted(
    arms: dict[str, list[dict[str, Any]]],
) -> None:
    trusts = [(m, s) for m, s in _pairs(arms, "shifted") if TRUST_YEAR.search(m["issuer"])]
    assert trusts
    for main, shifted in trusts:
        year = TRUST_YEAR.search(main["issuer"])[1]  # type: ignore[index]
        assert shifted["issuer"] == main["issuer"].replace(year, str(int(year) + 10))


def test_issuer_name_with_a_year_is_shifted_in_name_and_title() -> None:
    row = {
        "row_key": "r-1",
        "form": "ABS-15G",
        "issuer": "Harbor Auto Receivables Trust 2022-B",
        "title": "ABS-15G - Harbor Auto Receivables Trust 2022-B (Filer) 2023-03-01",
    }
    out = shifted_row(row)
    assert out["issuer"] == "Harbor Auto Receivables Trust 2032-B"
    assert out["title"] == "ABS-15G - Harbor Auto Receivables Trust 2032-B (Filer) 2033-03-01"


def test_derive_returns_main_unchanged_and_both_controls() -> None:
    row = {
        "row_key": "r-1",
        "form": "8-K",
        "cik": "0000320193",
        "issuer": "Apex Energy Inc.",
        "ticker": None,
        "title": "8-K - Apex Energy Inc. (0000320193) (Filer) 2023-03-01",
        "partition_date": "2023-03-01",
    }
    arms = derive(dict(row))
    assert arms["main"] == row
    assert arms["redacted"] == redacted_row(row)
    assert arms["shifted"] == shifted_row(row)


@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2040, 12, 31)))
def test_shift_date_is_ten_years_later_for_any_date(day: date) -> None:
    assert shift_date(day) == _plus_ten(day)


@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2040, 12, 31)))
def test_shift_date_moves_a_date_3651_to_3653_days(day: date) -> None:
    """Ten calendar years hold two or three leap days: 3652 or 3653 days, one day
    fewer when a 29 February is clamped to the 28th."""
    assert shift_date(day) - day in {timedelta(days=n) for n in (3651, 3652, 3653)}
