"""`points import` as strict as PITFALL's own `baseline verify`: each refusal built from the
real artifact with one thing changed, the unpinned judge imported but never rankable, and
the real artifact still importing with its figures."""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.points import Point, load_points
from harness.points.baseline import (
    MAX_ARTIFACT_BYTES,
    ArtifactError,
    import_baseline,
)
from harness.points.metrics import CLASSES
from tests.support.data import shared_path

REAL = ("data", "pitfall", "results", "2026-08-14-all-points-sol-xhigh.json")


@pytest.fixture(scope="module")
def points_dir() -> Path:
    return shared_path("data", "pitfall", "points")


@pytest.fixture(scope="module")
def points(points_dir: Path) -> list[Point]:
    return load_points(points_dir)


@pytest.fixture(scope="module")
def artifact() -> dict[str, Any]:
    return json.loads(shared_path(*REAL).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


Change = Callable[[dict[str, Any]], None]


def _written(tmp_path: Path, artifact: dict[str, Any], change: Change) -> Path:
    data = copy.deepcopy(artifact)
    change(data)
    path = tmp_path / "artifact.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _refused(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point], change: Change, why: str
) -> None:
    with pytest.raises(ArtifactError, match=why):
        import_baseline(_written(tmp_path, artifact, change), points)


def _cli(path: Path, points_dir: Path) -> int:
    return main(["points", "import", str(path), "--points-dir", str(points_dir)])


def _set(key: str, value: Any) -> Change:
    return lambda data: data.update({key: value})


def test_a_running_artifact_is_refused(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    why = "status 'running': the run was still going.*only a 'complete' artifact"
    _refused(tmp_path, artifact, points, _set("status", "running"), why)


def test_an_incomplete_artifact_is_refused_saying_what_it_is(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    why = "status 'incomplete': some of its points did not complete"
    _refused(tmp_path, artifact, points, _set("status", "incomplete"), why)


def test_a_failed_result_in_a_complete_artifact_is_refused(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    def failed(data: dict[str, Any]) -> None:
        data["results"][0]["status"] = "failed_judge"

    why = f"point {artifact['results'][0]['point_id']}: status 'failed_judge'"
    _refused(tmp_path, artifact, points, failed, why)


def test_tampered_agent_usage_is_refused_naming_the_figure(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    def more(data: dict[str, Any]) -> None:
        data["summary"]["agent_usage"]["output_tokens"] += 1

    why = "summary agent_usage.output_tokens is 608482, but its results' agent usage sums to 608481"
    _refused(tmp_path, artifact, points, more, why)


def test_tampered_judge_usage_is_refused_naming_the_figure(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    def fewer(data: dict[str, Any]) -> None:
        data["summary"]["judge_usage"]["input_tokens"] = 1000

    why = "summary judge_usage.input_tokens is 1000, but its results' judge usage sums to 2946304"
    _refused(tmp_path, artifact, points, fewer, why)


def test_tampered_web_search_calls_are_refused(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    def fewer(data: dict[str, Any]) -> None:
        data["summary"]["web_search_calls"] = 600

    why = "summary web_search_calls is 600, but its results' agent web_search_calls sum to 656"
    _refused(tmp_path, artifact, points, fewer, why)


def test_a_usage_figure_that_is_not_a_whole_number_is_refused(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    def fractional(data: dict[str, Any]) -> None:
        data["results"][3]["judge"]["usage"]["output_tokens"] = 1.5

    why = r"judge.usage.output_tokens is 1.5, not a whole number"
    _refused(tmp_path, artifact, points, fractional, why)


def test_a_flipped_class_with_a_recounted_summary_is_refused_by_its_raw_reply(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    first = next(
        i
        for i, r in enumerate(artifact["results"])
        if r["evaluation"]["class"] != "completely_correct"
    )

    def flipped(data: dict[str, Any]) -> None:  # one more PASS, every count made to agree
        data["results"][first]["evaluation"]["class"] = "completely_correct"
        counted = Counter(r["evaluation"]["class"] for r in data["results"])
        data["summary"]["class_counts"] = {c: counted.get(c, 0) for c in CLASSES}

    why = (
        f"point {artifact['results'][first]['point_id']}: evaluation class "
        "'completely_correct' differs from the class its judge's raw reply gives"
    )
    _refused(tmp_path, artifact, points, flipped, why)


def test_a_reason_other_than_the_raw_replys_is_refused(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    def reworded(data: dict[str, Any]) -> None:
        data["results"][5]["evaluation"]["decisive_reason"] = "The answer is fine."

    why = "decisive_reason differs from the reason its judge's raw reply gives"
    _refused(tmp_path, artifact, points, reworded, why)


def test_an_answer_other_than_the_agents_message_is_refused(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    def swapped(data: dict[str, Any]) -> None:
        data["results"][2]["answer"] = data["results"][3]["answer"]

    _refused(tmp_path, artifact, points, swapped, "answer is not text equal to agent.message")


def test_a_raw_reply_with_crlf_line_ends_still_matches_its_verdict(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    def crlf(data: dict[str, Any]) -> None:
        judge = data["results"][0]["judge"]
        judge["message"] = judge["message"].replace("\n", "\r\n")

    assert import_baseline(_written(tmp_path, artifact, crlf), points).rankable


def test_a_100000_deep_file_exits_2_with_a_message(
    tmp_path: Path, points_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert _cli(deep, points_dir) == 2
    err = capsys.readouterr().err
    assert "nested deeper than 32 levels, the limit for an artifact" in err
    assert "internal error" not in err


def test_a_file_deeper_than_the_limit_but_parseable_is_refused(
    tmp_path: Path, points: list[Point]
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"a": ' * 40 + "1" + "}" * 40, encoding="utf-8")
    with pytest.raises(ArtifactError, match="nested deeper than 32 levels"):
        import_baseline(deep, points)


def test_an_oversize_file_exits_2_with_a_message(
    tmp_path: Path, points_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert shared_path(*REAL).stat().st_size * 10 < MAX_ARTIFACT_BYTES  # the real one is small
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(MAX_ARTIFACT_BYTES + 1)  # sparse: no need to write it all
    assert _cli(big, points_dir) == 2
    err = capsys.readouterr().err
    assert f"larger than {MAX_ARTIFACT_BYTES} bytes (64 MiB), the limit for an artifact" in err


def test_an_unpinned_judge_imports_labelled_not_rankable(
    tmp_path: Path,
    artifact: dict[str, Any],
    points: list[Point],
    points_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _written(tmp_path, artifact, _set("judge", {"model": "gpt-4o-mini",
                                                       "reasoning_effort": "low"}))  # fmt: skip
    imported = import_baseline(path, points)
    assert (imported.judge_pinned, imported.judge_label, imported.rankable) == (
        False,
        "unpinned",
        False,
    )
    assert imported.not_rankable_because and "gpt-5.6-sol/xhigh" in imported.not_rankable_because
    assert _cli(path, points_dir) == 0
    out = capsys.readouterr().out
    assert "judge unpinned (gpt-4o-mini/low): not rankable: PITFALL pins its judge to" in out
    assert "accuracy 132/174" in out  # its figures are shown, never ranked


def test_the_pinned_judge_with_one_more_field_is_unpinned(
    tmp_path: Path, artifact: dict[str, Any], points: list[Point]
) -> None:
    judge = {"model": "gpt-5.6-sol", "reasoning_effort": "xhigh", "temperature": 1}
    imported = import_baseline(_written(tmp_path, artifact, _set("judge", judge)), points)
    assert not imported.rankable
    assert imported.judge_named == "gpt-5.6-sol/xhigh, also temperature"


def test_the_real_artifact_still_imports_pinned_and_rankable_with_its_figures(
    points: list[Point], points_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    imported = import_baseline(shared_path(*REAL), points)
    assert (imported.judge_pinned, imported.rankable, imported.status) == (True, True, "complete")
    figures = imported.summary()
    assert (figures["pass"], figures["fail"], figures["judged"]) == (132, 42, 174)
    assert _cli(shared_path(*REAL), points_dir) == 0
    out = capsys.readouterr().out
    assert "judge pinned (gpt-5.6-sol/xhigh): rankable" in out
    assert "accuracy 132/174 = 0.7586  95% Wilson [0.6899, 0.8162]" in out
