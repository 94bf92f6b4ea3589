"""The board drawn: main against shifted arm with both intervals, coloured by mask
verdict, the diagonal, a click's address per point; bounded at any number of runs. And
the contamination chart's intervals, with a caption that says only what they support."""

from __future__ import annotations

from typing import Any

import pytest

from pitweb import charts


def _row(
    n: int, main: float, shifted: float, verdict: str = "mask_holds", agent: str = "a"
) -> dict[str, Any]:
    return {
        "run_id": f"{n:016x}",
        "body_sha256": "sha256:" + f"{n:064x}",
        "submission": n,
        "agent": agent,
        "mask_verdict": verdict,
        "platform_main_pit": main,
        "platform_main_pit_low": main - 0.01,
        "platform_main_pit_high": main + 0.02,
        "platform_shifted_pit": shifted,
        "platform_shifted_pit_low": shifted - 0.005,
        "platform_shifted_pit_high": shifted + 0.005,
    }


def test_each_run_is_a_point_with_both_intervals_and_its_address() -> None:
    rows = [_row(1, 0.03, 0.01), _row(2, 0.02, 0.02), _row(3, 0.05, -0.01, "mask_leaks")]
    figure, note = charts.board_scatter(rows)
    assert figure is not None and note == ""
    traces = {t.name: t for t in figure.data}
    holds, leaks = traces["mask holds"], traces["mask leaks"]
    assert list(holds.x) == pytest.approx([3.0, 2.0]) and list(holds.y) == pytest.approx([1.0, 2.0])
    assert list(holds.error_x.array) == pytest.approx([2.0, 2.0])  # high - figure, in %
    assert list(holds.error_x.arrayminus) == pytest.approx([1.0, 1.0])
    assert list(holds.error_y.array) == pytest.approx([0.5, 0.5])
    assert holds.marker.color != leaks.marker.color
    assert list(leaks.customdata) == ["/runs/" + f"{3:064x}" + "/?submission=3"]
    diagonal = traces["shifted = main"]
    assert list(diagonal.x) == list(diagonal.y) == pytest.approx([-1.5, 7.0])  # every whisker


def test_no_run_with_both_figures_draws_nothing() -> None:
    row = _row(1, 0.03, 0.01)
    row["platform_shifted_pit"] = None
    assert charts.board_scatter([row]) == (None, "")
    assert charts.board_scatter([]) == (None, "")


def test_ten_thousand_runs_draw_the_first_five_hundred_and_say_so() -> None:
    rows = [_row(n, 0.01 * (n % 7), 0.001 * (n % 11)) for n in range(1, 10_001)]
    figure, note = charts.board_scatter(rows)
    assert figure is not None
    assert sum(len(t.x) for t in figure.data if t.name != "shifted = main") == charts.BOARD_POINTS
    assert note == "The chart draws the first 500 of these 10000 runs, in the board's order."


def test_an_agents_name_is_drawn_as_written_never_as_markup() -> None:
    figure, _ = charts.board_scatter([_row(1, 0.01, 0.0, agent='<a href="//x.example">win</a>')])
    assert figure is not None
    (label,) = figure.data[0].text
    assert "<a" not in label and "&lt;a href" in label


def test_the_contamination_chart_draws_each_deltas_interval() -> None:
    deltas = {"pit": {"main_minus_shifted": 0.01, "main_minus_redacted": -0.002}}
    intervals = {"pit": {"main_minus_shifted": [-0.004, 0.03], "main_minus_redacted": None}}
    figure = charts.contamination(deltas, "mask_holds", intervals)
    assert figure is not None
    shifted, redacted = figure.data
    pit = charts.CLOCK_ORDER.index("pit")
    assert shifted.error_y.array[pit] == pytest.approx(2.0)  # (0.03 - 0.01) in pp
    assert shifted.error_y.arrayminus[pit] == pytest.approx(1.4)
    assert redacted.error_y.array is None  # no interval: no whisker, never a made-up one
    assert "95% interval" in figure.layout.title.text


def test_the_caption_says_only_what_the_shifted_deltas_interval_supports() -> None:
    from pitweb.runs.presentation import shifted_delta_reading

    assert "spans zero" in shifted_delta_reading([-0.01, 0.02])
    assert "lies above zero" in shifted_delta_reading([0.001, 0.02])
    assert "measures no memory" in shifted_delta_reading([-0.02, -0.001])
    assert "no interval" in shifted_delta_reading(None)


@pytest.mark.django_db(transaction=True)
def test_the_board_page_fetches_its_chart_which_draws_that_pages_own_rows(
    priced_release: Any, submitter: Any, stub_run: Any, settings: Any
) -> None:
    import json
    import re
    from html import unescape

    from django.contrib.auth.models import AnonymousUser
    from django.test import Client

    from pitweb.board import selectors
    from tests.pitweb.board.test_board_store import spread
    from tests.pitweb.runs.test_pages import submit

    settings.PITWEB_MIN_RANKED_TRADES = 1
    run = submit(submitter, stub_run)
    spread(run, 70)
    chart = f"/benchmarks/{run.benchmark.key}/chart.json"
    client = Client()
    html = client.get("/benchmarks/", {"page": 2}, follow=True).content.decode()
    assert 'id="fig-board"' not in html  # no figure in the page: it comes after the table
    (src,) = re.findall(r'data-figure="fig-board" data-figure-src="([^"]+)"', html)
    assert unescape(src) == f"{chart}?page=2"
    answer = client.get(unescape(src))
    assert answer["Content-Type"] == "application/json"
    drawn = answer.json()
    board = selectors.leaderboard(
        user=AnonymousUser(), release=None, form=None, start=None, end=None,
        isolated=False, page=2, per_page=selectors.PAGE_ROWS,
    )  # fmt: skip
    expected, note = charts.board_scatter([*board["ranked"], *board["mask_leaks"]])
    assert expected is not None and note == drawn["note"] == ""
    assert drawn["figure"] == json.loads(expected.to_json())
    # its points are the runs of the second page's rows, no other
    urls = {u for trace in drawn["figure"]["data"] for u in trace.get("customdata") or ()}
    shown = set(re.findall(r'href="(/runs/[0-9a-f]{64}/\?submission=\d+)"', html))
    assert urls == shown and len(urls) == 71 - selectors.PAGE_ROWS
    # a page by cursor asks for its chart by the same cursor
    after = board["pagination"]["previous"]
    html = client.get("/benchmarks/", {"before": after}, follow=True).content.decode()
    (src,) = re.findall(r'data-figure-src="([^"]+)"', html)
    assert unescape(src).startswith(f"{chart}?before=")
    assert client.get(unescape(src)).json()["figure"] is not None


@pytest.mark.django_db(transaction=True)
def test_the_board_chart_refuses_a_bad_query_and_draws_nothing_for_an_empty_board(
    priced_release: Any,
) -> None:
    from django.test import Client

    client = Client()
    for query in ({"after": "not-a-cursor"}, {"start": "someday"}, {"page": "-1x"}):
        answer = client.get("/leaderboard-chart.json", query)
        assert answer.status_code == 400, query
        assert answer.json()["error"]["code"], query
    for query in ({"after": "not-a-cursor"}, {"page": "-1x"}):
        answer = client.get(f"/benchmarks/{'0' * 32}/chart.json", query)
        assert answer.status_code == 400, query
    # no run, no benchmark: nothing to draw, and no board to draw it on
    drawn = client.get("/leaderboard-chart.json").json()
    assert drawn["figure"] is None
    assert "data-figure-src" not in client.get("/benchmarks/", follow=True).content.decode()
