"""Where the probe's readers find a date or an issuer (what the reasoning audit quotes)
changes nothing they decide: the probe scores its answers as it did."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from harness.rundata.probe_scoring import (
    _SUFFIXES,
    _issuer_named,
    date_spans,
    find_dates,
    issuer_span,
)


def _words_before(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def issuer_named_before(answer: str, issuer: str | None, ticker: str | None) -> str | None:
    """The matcher as it was before it said where: the reference the new one must equal."""
    if issuer:
        core = [w for w in _words_before(issuer) if w not in _SUFFIXES]
        if core:
            needle = " " + " ".join(core) + " "
            if needle in " " + " ".join(_words_before(answer)) + " ":
                return "name"
    if (
        ticker
        and len(ticker) >= 2
        and re.search(rf"(?<![A-Za-z0-9]){re.escape(ticker)}(?![A-Za-z0-9])", answer)
    ):
        return "ticker"
    if (
        ticker
        and len(ticker) == 1
        and re.search(rf"(\$|\(|ticker:?\s*){re.escape(ticker)}\b", answer)
    ):
        return "ticker"
    return None


# texts that mix the matcher's hard cases: suffixes, case, characters that grow or change
# when lowered (U+0130, the Kelvin sign, a final sigma), punctuation and tickers
PIECES = ["Acme", "ACME", "acme", "Holdings", "Inc", "the", "The", "İnc", "\u212aelvin",
          "ΟΔΟΣ", "$A", "(A)", "ticker: A", "AC", "AC.B", "-", ",", " ", "  ", "\n", "2023",
          "kelvin", "Co", "Ltd."]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
names = st.one_of(st.none(), texts)
tickers = st.one_of(st.none(), st.sampled_from(["A", "AC", "AC.B", "ACME", "İ", ""]))


@given(texts, names, tickers)
def test_the_issuer_matcher_decides_as_before(
    answer: str, issuer: str | None, ticker: str | None
) -> None:
    assert _issuer_named(answer, issuer, ticker) == issuer_named_before(answer, issuer, ticker)


@given(texts, names, tickers)
def test_where_the_issuer_is_named_is_where_the_text_names_it(
    answer: str, issuer: str | None, ticker: str | None
) -> None:
    found = issuer_span(answer, issuer, ticker)
    if found is None:
        return
    how, start, end = found
    named = answer[start:end]
    if how == "name":
        assert issuer is not None
        core = [w for w in _words_before(issuer) if w not in _SUFFIXES]
        assert _words_before(named) == core
    else:
        assert ticker is not None and named.endswith(ticker)


def test_an_issuer_after_a_character_that_grows_when_lowered_is_found_in_place() -> None:
    answer = "İİ said Acme Holdings Inc filed"
    assert issuer_span(answer, "Acme Holdings, Inc.", None) == ("name", 8, 21)
    assert answer[8:21] == "Acme Holdings"


@given(st.text(alphabet="0123456789-/. MarchJnFebthof,'st", max_size=40))
def test_date_spans_are_find_dates_with_their_places(text: str) -> None:
    spans = date_spans(text)
    assert [(w, r, d) for _, _, w, r, d in spans] == find_dates(text)
    assert all(text[start:end] == written for start, end, written, _, _ in spans)
