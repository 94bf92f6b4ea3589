"""Chart labels never cut inside a word; accuracy per suite drawn with the harness's
Wilson interval."""

from __future__ import annotations

import html

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.points.metrics import CLASSES, class_shares, wilson
from pitweb import charts


def _lines(tick: str) -> list[str]:
    return [html.unescape(line) for line in tick.split("<br>")]


def test_two_baselines_that_differ_by_one_letter_keep_different_ticks() -> None:
    a = charts.tick_label("baseline-momentum-long-window-agent version 2023-03-01-aaaa")
    b = charts.tick_label("baseline-momentum-long-window-agent version 2023-03-01-aaab")
    assert a != b


@given(st.lists(st.text(alphabet="abcdefghij-<>&", min_size=1, max_size=30), max_size=12))
def test_a_tick_shows_only_whole_words_of_its_label(words: list[str]) -> None:
    label = " ".join(words) or "x"
    lines = _lines(charts.tick_label(label))
    assert len(lines) <= charts.TICK_LINES
    for line in lines:
        assert line == "…" or _whole_words(line, label), (label, lines)


def _whole_words(line: str, label: str) -> bool:
    """``line`` is a run of ``label`` that starts and ends between words (a space; after
    a hyphen, or before a dash written ``--``, where a word is wrapped)."""
    for start in range(len(label)):
        end = start + len(line)
        if label.startswith(line, start):
            begins = start == 0 or label[start - 1] in " -" or line.startswith("--")
            ends = (
                end == len(label)
                or label[end] == " "
                or line.endswith("-")
                or label.startswith("--", end)
            )
            if begins and ends:
                return True
    return False


def test_a_long_label_keeps_its_start_and_its_end() -> None:
    label = "an agent with a rather long descriptive name indeed 0123456789abcdef"
    lines = _lines(charts.tick_label(label))
    assert lines[0].startswith("an agent") and lines[-1].endswith("0123456789abcdef")
    assert "…" in lines


def test_a_long_hostile_label_is_shown_as_text() -> None:
    tick = charts.tick_label('<a href="https://evil.example/x">click</a> 00ff')
    assert "<a" not in tick and "&lt;a" in tick


def test_the_class_shares_draw_each_class_with_the_harness_wilson_interval() -> None:
    label = "a model <b>with</b> a long name (judged set 12)"
    counts = {"completely_correct": 7, "numeric_factual_error": 3}
    shares = class_shares(counts)
    row = {
        "judged": 10, **{c: counts.get(c, 0) for c in CLASSES},
        "class_intervals": {c: {"share": v[0], "low": v[1], "high": v[2]}
                            for c, v in shares.items() if v is not None},
    }  # fmt: skip
    nothing = {"judged": 0, "class_intervals": dict.fromkeys(CLASSES)}
    figure = charts.class_shares([row, nothing], [label, "never judged"])
    assert figure is not None and len(figure.data) == 1  # a row with no judged answer: no bars
    [bars] = figure.data
    assert bars.name == charts.literal(label) and "<b>" not in bars.name
    low, high = wilson(7, 10)
    assert bars.y[0] == pytest.approx(70.0)
    assert bars.error_y.array[0] == pytest.approx((high - 0.7) * 100)
    assert bars.error_y.arrayminus[0] == pytest.approx((0.7 - low) * 100)
    assert charts.class_shares([nothing], ["never judged"]) is None


def test_accuracy_per_suite_draws_the_harness_wilson_interval() -> None:
    low, high = wilson(7, 10)
    frame = pd.DataFrame(
        [
            {"label": "m (judged set 1)", "suite": "alpha", "accuracy": 0.7,
             "accuracy_low": low, "accuracy_high": high},
            {"label": "m (judged set 1)", "suite": "beta", "accuracy": None,
             "accuracy_low": None, "accuracy_high": None},
        ]
    )  # fmt: skip
    figure = charts.suite_accuracy(frame)
    assert figure is not None
    bars = figure.data[0]
    assert bars.orientation == "h" and list(bars.y) == ["alpha", "beta"]
    assert bars.error_x.array[0] == pytest.approx((high - 0.7) * 100)
    assert bars.error_x.arrayminus[0] == pytest.approx((0.7 - low) * 100)
    assert bars.error_x.array[1] is None  # no judged answer: no bar, no whisker


def test_accuracy_per_suite_draws_nothing_without_a_judged_answer() -> None:
    frame = pd.DataFrame(
        [{"label": "m", "suite": "a", "accuracy": None, "accuracy_low": None,
          "accuracy_high": None}]
    )  # fmt: skip
    assert charts.suite_accuracy(frame) is None


def test_the_radar_draws_no_scale_numbers_across_its_traces() -> None:
    frame = pd.DataFrame(
        [{"label": "m", "class": c, "count": 1, "share": 1 / 6} for c in charts.CLASS_COLOURS]
    )
    polar = charts.class_radar(frame).layout.polar
    assert polar.radialaxis.showticklabels is False
    assert polar.domain.y[1] < 1  # the spokes' names below the title
