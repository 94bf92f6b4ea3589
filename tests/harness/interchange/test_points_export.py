"""Judged sets exported: PITFALL's real judged baseline and a set of ours judged on a
loopback server, each as an Every Eval Ever record valid against the vendored schema and
as an Inspect eval log that Inspect's own reader reads back with every sample and score
and its listing names by its file name; forged sets, and a set whose judge failed its
controls, are refused with nothing written."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from harness.cli import main
from harness.interchange.every_eval_ever import InterchangeError, Source, problems
from harness.interchange.inspect_log import log_id, write_inspect_log
from harness.interchange.judged import JudgedPoints, verified_judged
from harness.interchange.points_record import points_record
from harness.points import Point, load_points
from harness.points.artifacts import write_artifact
from harness.points.judge import PROMPT
from harness.points.metrics import CLASSES
from harness.points.run import answer_points, judge_answer_set
from tests.support.chat_server import Chat
from tests.support.data import shared_path
from tests.support.points import answerer, judge, knows

REAL = ("data", "pitfall", "results", "2026-08-14-all-points-sol-xhigh.json")
WHEN = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def points_dir() -> Path:
    return shared_path("data", "pitfall", "points")


@pytest.fixture(scope="module")
def points(points_dir: Path) -> list[Point]:
    return load_points(points_dir)


@pytest.fixture(scope="module")
def artifact() -> dict[str, Any]:
    return json.loads(shared_path(*REAL).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def baseline(points: list[Point]) -> JudgedPoints:
    return verified_judged(shared_path(*REAL), points)


def _classes(artifact: dict[str, Any]) -> dict[str, str]:
    return {r["point_id"]: r["evaluation"]["class"] for r in artifact["results"]}


def _results(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["evaluation_result_id"]: r for r in record["evaluation_results"]}


# -- PITFALL's judged baseline ----------------------------------------------------------


def test_pitfalls_baseline_is_a_valid_record_with_its_own_figures(
    baseline: JudgedPoints, artifact: dict[str, Any]
) -> None:
    record = points_record(baseline, source=Source(), retrieved_at=WHEN)
    assert problems(record) == []
    counts = artifact["summary"]["class_counts"]
    judged = sum(counts.values())
    results = _results(record)
    accuracy = results["pitfall.points.accuracy"]
    assert accuracy["score_details"]["score"] == counts["completely_correct"] / judged
    interval = accuracy["score_details"]["uncertainty"]["confidence_interval"]
    assert interval["lower"] < accuracy["score_details"]["score"] < interval["upper"]
    assert accuracy["score_details"]["uncertainty"]["num_samples"] == judged == 174
    for name in CLASSES:
        share = results[f"pitfall.points.class_share.{name}"]["score_details"]
        assert share["score"] == counts[name] / judged
        assert share["details"]["count"] == str(counts[name])
    # its judge is named, but no prompt is made up for it: the artifact does not hold one
    assert "llm_scoring" not in accuracy["metric_config"]
    judge_details = accuracy["metric_config"]["additional_details"]
    assert judge_details["judge_model"] == artifact["judge"]["model"]
    assert judge_details["judge_prompt"] == "not held in the artifact"
    assert record["model_info"]["id"] == artifact["agent"]["model"]
    assert record["eval_library"]["name"] == artifact["harness"]["name"]
    assert not any(k.startswith("pitfall.points.pass_at") for k in results)


def _read_back(folder: Path, judged: JudgedPoints) -> tuple[Path, EvalLog]:
    path = write_inspect_log(judged, folder)
    return path, read_eval_log(str(path))


def test_pitfalls_baseline_reads_back_in_inspect_with_every_sample_and_score(
    baseline: JudgedPoints, artifact: dict[str, Any], points: list[Point], tmp_path: Path
) -> None:
    path, log = _read_back(tmp_path / "logs", baseline)
    assert log.status == "success"
    assert log.eval.task == "pitfall_points"
    assert log.eval.model == artifact["agent"]["model"]
    assert log.eval.dataset.name == "pitfall-points"
    assert log.eval.dataset.samples == len(points)
    classes = _classes(artifact)
    assert log.samples is not None and len(log.samples) == len(classes) == 174
    questions = {p.id: p.question for p in points}
    answers = {r["point_id"]: r["answer"] for r in artifact["results"]}
    for sample in log.samples:
        assert sample.scores is not None and sample.epoch == 1
        judged_class = classes[str(sample.id)]
        assert sample.scores["error_class"].value == judged_class
        assert sample.scores["verdict"].value == ("C" if judged_class == CLASSES[0] else "I")
        assert sample.input == questions[str(sample.id)]
        assert sample.output.completion == answers[str(sample.id)]
        assert sample.target == ""
    assert log.results is not None
    accuracy = log.results.scores[0].metrics["accuracy"].value
    assert accuracy == Counter(classes.values())[CLASSES[0]] / 174
    text = path.read_text(encoding="utf-8")
    hidden = [p.ground_truth for p in points if len(p.ground_truth) > 40]
    assert hidden and not any(truth in text for truth in hidden)


def test_inspects_listing_reads_the_logs_name(baseline: JudgedPoints, tmp_path: Path) -> None:
    path, _ = _read_back(tmp_path / "logs", baseline)
    assert path.name.startswith("2026-08-14T10-58-25-00-00_pitfall-points_")
    listed = list_eval_logs(str(tmp_path / "logs"))
    assert [(Path(i.name).name, i.task, i.task_id) for i in listed] == [
        (path.name, "pitfall-points", log_id(baseline))
    ]


def _forged_artifact(artifact: dict[str, Any], tmp_path: Path) -> Path:
    """The real artifact with one verdict raised to completely_correct and its summary
    made to agree: only the judge's raw reply still says otherwise."""
    data = json.loads(json.dumps(artifact))
    result = next(r for r in data["results"] if r["evaluation"]["class"] != CLASSES[0])
    old = result["evaluation"]["class"]
    result["evaluation"]["class"] = CLASSES[0]
    data["summary"]["class_counts"][old] -= 1
    data["summary"]["class_counts"][CLASSES[0]] += 1
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_forged_baseline_is_refused(
    artifact: dict[str, Any], points: list[Point], tmp_path: Path
) -> None:
    with pytest.raises(InterchangeError, match=r"not verified: .*differs from the class its judge"):
        verified_judged(_forged_artifact(artifact, tmp_path), points)


@pytest.mark.parametrize("form", ["eee", "inspect"])
def test_the_command_refuses_a_forged_baseline_and_writes_nothing(
    artifact: dict[str, Any],
    points_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    form: str,
) -> None:
    out = tmp_path / "out"
    args = ["--points-dir", str(points_dir), "--format", form, "--out", str(out)]
    assert main(["points", "export", str(_forged_artifact(artifact, tmp_path)), *args]) == 1
    assert capsys.readouterr().out.startswith("NOT exported: not verified")
    assert not out.exists()
    assert main(["points", "export", str(shared_path(*REAL)), *args]) == 0
    written = out if form == "eee" else next(out.iterdir())
    assert written.is_file()
    if form == "eee":
        assert problems(json.loads(written.read_text(encoding="utf-8"))) == []
    else:
        assert read_eval_log(str(written)).status == "success"


# -- a judged set of ours --------------------------------------------------------------


def _judged_set(
    server: tuple[Chat, str], points: list[Point], folder: Path, mode: str = "good"
) -> tuple[Path, Path]:
    """Four points answered twice each (point 0's second answer fails, retries and all: a
    harness error),
    right on even calls, judged on the loopback server; (judged set, answer set)."""
    state, url = server

    def correct(i: int, n: int) -> bool | None:
        return None if i == 0 and n > 1 else (i + n) % 2 == 0

    state.agent = knows(points, correct)
    answers = answer_points(answerer(url), points, samples=2, workers=1)
    state.judge_mode = mode
    if mode == "unstable":
        state.flip_share, state.flip_classes = (
            0.6,
            ("numeric_factual_error", "analysis_logic_error"),
        )
    judged = judge_answer_set(judge(url), answers, points, stability_k=2, stride=1, workers=1)
    folder.mkdir(parents=True, exist_ok=True)
    write_artifact(folder / "answers.json", answers)
    write_artifact(folder / "judged.json", judged)
    return folder / "judged.json", folder / "answers.json"


def test_a_set_of_ours_exports_with_its_judge_pass_at_k_and_harness_errors(
    server: tuple[Chat, str], points: list[Point], tmp_path: Path
) -> None:
    few = points[:4]
    judged_path, answers_path = _judged_set(server, few, tmp_path / "set")
    judged = verified_judged(judged_path, few, answers=answers_path)
    record = points_record(judged, source=Source("Lab", "first_party"), retrieved_at=WHEN)
    assert problems(record) == []
    assert record["source_metadata"]["additional_details"]["rankable"] == "true"  # pinned
    results = _results(record)
    scoring = results["pitfall.points.accuracy"]["metric_config"]["llm_scoring"]
    assert scoring["input_prompt"] == PROMPT
    assert scoring["judges"][0]["model_info"]["id"] == judged.judge_model
    figures = judged.figures()
    assert figures["harness_error"] == 1
    assert results["pitfall.points.accuracy"]["score_details"]["details"]["harness_error"] == "1"
    assert {"pitfall.points.pass_at_1", "pitfall.points.pass_at_2"} <= set(results)
    assert results["pitfall.points.pass_at_2"]["metric_config"]["metric_parameters"] == {"k": 2}

    _, log = _read_back(tmp_path / "logs", judged)
    assert log.samples is not None and len(log.samples) == 8
    by_key = {(str(s.id), s.epoch): s for s in log.samples}
    assert set(by_key) == {(p.id, n) for p in few for n in (1, 2)}
    failed = by_key[(few[0].id, 2)]
    assert failed.scores is None and failed.error is not None
    assert failed.error.message.startswith("HARNESS_ERROR")
    for answer in judged.answers:
        sample = by_key[(answer.point_id, answer.sample + 1)]
        if answer.judged_class is not None:
            assert sample.scores is not None
            assert sample.scores["error_class"].value == answer.judged_class
            assert sample.scores["error_class"].explanation == answer.reason
    assert log.eval.config.epochs == 2
    assert log.results is not None and log.results.scores[0].unscored_samples == 1


def test_a_set_whose_judge_failed_its_controls_is_not_exported(
    server: tuple[Chat, str], points: list[Point], tmp_path: Path
) -> None:
    few = points[:4]
    judged_path, answers_path = _judged_set(server, few, tmp_path / "set", mode="unstable")
    with pytest.raises(InterchangeError, match="not a result: the judge is unreliable"):
        verified_judged(judged_path, few, answers=answers_path)


def test_a_set_of_ours_with_an_edited_verdict_is_refused(
    server: tuple[Chat, str], points: list[Point], tmp_path: Path
) -> None:
    few = points[:4]
    judged_path, answers_path = _judged_set(server, few, tmp_path / "set")
    data = json.loads(judged_path.read_text(encoding="utf-8"))
    body = data["body"]
    verdict = next(v for v in body["verdicts"] if v["class"] not in (None, CLASSES[0]))
    verdict["class"], verdict["outcome"] = CLASSES[0], "PASS"
    write_artifact(judged_path, body)  # resealed: its digest holds, its verdict does not
    with pytest.raises(InterchangeError, match=r"not verified: .*differs from the raw reply"):
        verified_judged(judged_path, few, answers=answers_path)
    with pytest.raises(InterchangeError, match="pass --answers"):
        verified_judged(judged_path, few)
