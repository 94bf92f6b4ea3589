"""A judged-point run, end to end on a loopback chat-completions server: the agent sees the
Question only and every answer is measured; an agent that cannot be reached is a harness
error, never a FAIL; pass@k over several answers per point; judged sets verify, and
forged ones do not; PITFALL's real answers re-judged under our controls."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness import canonical
from harness.points import Point, load_points
from harness.points.answer import AgentConfig, Answerer
from harness.points.artifacts import (
    ANSWER_SET,
    JUDGED_SET,
    PointsArtifactError,
    answer_summary,
    as_stored,
    read_artifact,
    typed,
    write_artifact,
)
from harness.points.cli.report import printable
from harness.points.judge import Judge, JudgeConfig
from harness.points.metrics import pass_at_k
from harness.points.model import AnswerSet, plain
from harness.points.run import answer_points, judge_answer_set
from harness.points.verify import verify_answers, verify_judged
from tests.support.chat_server import AGENT_MODEL_RETURNED, JUDGE_MODEL_RETURNED, Chat
from tests.support.data import shared_path
from tests.support.points import answerer, judge, knows
from tests.support.points import points_cli as _cli


@pytest.fixture(scope="module")
def points() -> list[Point]:
    return load_points(shared_path("data", "pitfall", "points"))[:5]


def test_the_agent_sees_the_question_only_and_every_answer_is_measured(
    server: tuple[Chat, str], points: list[Point]
) -> None:
    state, url = server
    state.agent = knows(points, lambda i, n: i % 2 == 0)
    body = plain(
        answer_points(
            answerer(url, price_input_per_mtok=2.0, price_output_per_mtok=8.0), points, workers=3
        )
    )
    requests = [json.loads(b) for b in state.bodies]
    sent = [r["messages"][-1]["content"] for r in requests]
    assert len(sent) == len(points) and all(len(r["messages"]) == 1 for r in requests)
    for point in points:
        assert not any(point.provenance in text for text in sent)
        assert not any(point.ground_truth in text for text in sent)
        assert sum(f"<Question>\n{point.question}\n</Question>" in text for text in sent) == 1
    assert all(r["reasoning_effort"] == "low" for r in requests)
    assert body["status"] == "complete" and body["point_count"] == len(points)
    first = body["answers"][0]
    assert first["tokens"] == {"input": 1200, "cached_input": 1000, "output": 300,
                               "reasoning_output": 120}  # fmt: skip
    assert first["cost"] == {
        "usd": pytest.approx((1200 * 2 + 300 * 8) / 1e6),
        "source": "configured_prices",
    }
    assert first["model_returned"] == AGENT_MODEL_RETURNED and first["tool_counts"] == {}
    assert first["latency_seconds"] >= 0 and first["answered_at"].startswith("20")
    assert body["summary"]["tokens"]["input"] == 1200 * len(points)
    assert body["summary"]["cost_usd"] == pytest.approx(len(points) * 0.0048)
    assert body["experiment"]["tools"] == [] and body["experiment"]["agent"]["model"] == (
        "agent-under-test"
    )
    assert "k" not in json.dumps(body["experiment"]).split('"')  # never the key
    assert body["capability_line"] == (
        "ground_truth_visible_to_agent=False provenance_visible_to_agent=False "
        "tools_offered=none training_cutoff_checked=False"
    )
    unpriced = plain(answer_points(answerer(url), points[:1]))
    assert unpriced["answers"][0]["cost"] == {"usd": None, "source": "not_reported"}
    assert unpriced["summary"]["cost_usd"] is None  # no total from unknown costs


def test_an_agent_that_cannot_be_reached_is_a_harness_error_never_a_fail(
    server: tuple[Chat, str], points: list[Point]
) -> None:
    state, url = server
    # point 0 answers right, point 1 is never reachable, point 2 says nothing, the rest err
    state.agent = knows(points, lambda i, n: {0: True, 1: None}.get(i, False))
    answers = plain(answer_points(answerer(url), points, workers=1))
    down = answers["answers"][1]
    assert down["status"] == "harness_error" and down["attempts"] == 3 and down["text"] == ""
    assert "agent call failed" in down["error"] and answers["status"] == "incomplete"
    judged = plain(
        judge_answer_set(judge(url), typed(answers, AnswerSet), points, stability_k=2, stride=2)
    )
    verdict = judged["verdicts"][1]
    assert (verdict["class"], verdict["outcome"]) == (None, "HARNESS_ERROR")
    assert verdict["error"].startswith("no answer to judge: agent call failed")
    figures = judged["summary"]
    assert (figures["pass"], figures["fail"], figures["harness_error"]) == (1, 3, 1)
    assert figures["harness_errors"] == {"agent": 1, "judge": 0}
    assert figures["judged"] == 4 and figures["accuracy"] == 0.25  # 1 of 4, not 1 of 5
    assert figures["accuracy_range_over_harness_errors"] == [0.2, 0.4]  # said beside it
    assert judged["points"][1]["n_harness_error"] == 1 and judged["points"][1]["passk"] == {}
    verify_judged(_stored(judged), _stored(answers), points)


def test_pass_at_k_over_several_answers_per_point(
    server: tuple[Chat, str], points: list[Point]
) -> None:
    state, url = server
    correct_first = [0, 1, 2, 4]  # point i answers right on its first correct_first[i] calls
    plan: dict[int, Callable[[int], bool | None]] = {
        i: (lambda n, c=c: n <= c) for i, c in enumerate(correct_first)
    }
    # point 4: right, then a sample whose three attempts all fail, then wrong, then right
    plan[4] = lambda n: {1: True, 5: False, 6: True}.get(n)
    state.agent = knows(points, lambda i, n: plan[i](n))
    answers = plain(answer_points(answerer(url), points, samples=4, workers=1))
    assert [a["sample"] for a in answers["answers"][:4]] == [0, 1, 2, 3]
    judged = plain(
        judge_answer_set(judge(url), typed(answers, AnswerSet), points, stability_k=2, stride=1)
    )
    by_point = {r["point_id"]: r for r in judged["points"]}
    record = by_point[points[1].id]
    assert (record["n_scored"], record["n_pass"]) == (4, 1)
    assert record["passk"]["2"] == pytest.approx(0.5)  # 1 - (3/4)(2/3)
    assert by_point[points[2].id]["passk"]["2"] == pytest.approx(5 / 6)  # 1 - (2/4)(1/3)
    assert by_point[points[1].id]["passk"]["4"] == 1.0  # guaranteed by counting
    odd = by_point[points[4].id]
    assert (odd["n_answers"], odd["n_scored"], odd["n_pass"], odd["n_harness_error"]) == (
        4,
        3,
        2,
        1,
    )
    assert odd["passk"] == {"1": pytest.approx(2 / 3), "2": 1.0, "3": 1.0}
    assert odd["agent_model"] == "agent-under-test" and odd["judge_model"] == "gpt-5.6-sol"
    assert odd["date"] == judged["verdicts"][-1]["judged_at"][:10]
    assert "judge_pinned=True" in odd["capabilities"]
    passk = judged["summary"]["pass_at_k"]
    assert passk["1"]["value"] == pytest.approx((0 + 0.25 + 0.5 + 1 + 2 / 3) / 5)
    assert passk["2"]["value"] == pytest.approx((0 + 0.5 + 5 / 6 + 1 + 1) / 5)
    assert passk["4"] == {"value": pytest.approx(0.75), "points": 4,
                          "points_without_k_scored_answers": 1}  # fmt: skip
    assert passk["4"]["value"] == pytest.approx(sum(pass_at_k(4, c, 4) for c in correct_first) / 4)
    assert judged["controls"]["stability"]["items"] == len(points)


def _stored(body: dict[str, Any]) -> dict[str, Any]:
    return json.loads(canonical.dumps(body))


def _resigned(path: Path, body: dict[str, Any]) -> None:
    """A forger's file: the body changed and its digest recomputed."""
    write_artifact(path, body)


def test_judged_sets_verify_and_forged_ones_do_not(
    server: tuple[Chat, str], points: list[Point], tmp_path: Path
) -> None:
    state, url = server
    state.agent = knows(points, lambda i, n: i < 3)
    answers = plain(answer_points(answerer(url), points))
    write_artifact(tmp_path / "answers.json", answers)
    answers = read_artifact(tmp_path / "answers.json", ANSWER_SET)
    judged = plain(
        judge_answer_set(judge(url), typed(answers, AnswerSet), points, stability_k=2, stride=2)
    )
    write_artifact(tmp_path / "judged.json", judged)
    judged = read_artifact(tmp_path / "judged.json", JUDGED_SET)
    figures = verify_judged(judged, answers, points)
    assert (figures["pass"], figures["fail"]) == (3, 2)
    assert judged["judge"] == {"model": "gpt-5.6-sol", "effort": "xhigh",
                               "models_returned": [JUDGE_MODEL_RETURNED]}  # fmt: skip
    assert judged["capability_line"] == (
        "ground_truth_visible_to_agent=False provenance_sent_to_judge=False "
        "judge_pinned=True harness_errors_scored=False"
    )

    def refused(forged: dict[str, Any], why: str, against: dict[str, Any] = answers) -> None:
        _resigned(tmp_path / "forged.json", forged)
        with pytest.raises(PointsArtifactError, match=why):
            verify_judged(read_artifact(tmp_path / "forged.json"), against, points)

    wrong = next(i for i, v in enumerate(judged["verdicts"]) if v["outcome"] == "FAIL")
    regraded = copy.deepcopy(judged)
    regraded["verdicts"][wrong]["class"] = "completely_correct"
    regraded["verdicts"][wrong]["outcome"] = "PASS"
    refused(regraded, "differs from the raw reply")
    regraded["verdicts"][wrong]["raw"] = (
        "Class: completely_correct\n\n" + (regraded["verdicts"][wrong]["decisive_reason"])
    )
    refused(regraded, "per-point records are not what the verdicts give")
    edited = copy.deepcopy(answers)  # a better answer slipped in after judging
    edited["answers"][wrong]["text"] = points[wrong].ground_truth
    refused(judged, "bound to another answer set", against=edited)
    first = points[0].id

    def hide_failures(j: dict[str, Any]) -> None:  # FAILs passed off as judge errors
        for verdict in j["verdicts"]:
            if verdict["outcome"] == "FAIL":
                verdict.update({"class": None, "outcome": "HARNESS_ERROR", "error": "timeout"})

    def drop_errors(j: dict[str, Any]) -> None:
        hide_failures(j)
        for verdict in j["verdicts"]:
            verdict["error"] = ""

    def fake_stability(j: dict[str, Any]) -> None:
        j["controls"]["stability"].update(
            items=2,
            ratings={
                "not-a-point": ["completely_correct"] * 2,
                "another": ["completely_correct"] * 2,
            },
        )

    forgeries: list[tuple[Callable[[dict[str, Any]], Any], str]] = [
        (lambda j: j["controls"]["positive"].pop(first), "a positive control for every"),
        (lambda j: j["controls"]["positive"][first].update({"class": "other_error"}),
         f"point {first}: no passed positive control"),
        (lambda j: j["controls"]["positive"][first].update(raw="Class: other_error\n\nx"),
         "positive control: class completely_correct differs from the raw reply"),
        (lambda j: j["verdicts"].pop(wrong), "not one per answer"),
        (hide_failures, "a verdict that parses is recorded as a harness error"),
        (drop_errors, "a judge harness error without its reason"),
        (lambda j: j["controls"].pop("negative"), "controls: unexpected keys"),
        (lambda j: j["controls"]["negative"].pop(), "negative controls for every answered"),
        (lambda j: j["controls"]["negative"][0]["checks"]["empty_answer"].update(passed=False),
         "empty_answer: passed contradicts its class"),
        (lambda j: j["controls"]["negative"][0].update(flagged=True), "flagged contradicts"),
        (lambda j: j["controls"]["negative"][0].update(flagged=None), "flagged contradicts"),
        (lambda j: j["controls"]["stability"]["replies"][first].__setitem__(
            0, "Class: analysis_logic_error\n\nforged"), "differs from the raw reply"),
        (lambda j: j["controls"]["stability"].update(flip_rate=0.5), "stability figures"),
        (fake_stability, "not every stride-th answered point"),
        (lambda j: j["verdicts"][0]["judge"].update(model_configured="a-lenient-judge"),
         "judged by another judge"),
        (lambda j: j["judge"].update(models_returned=["gpt-5.6-sol"]), "returned models"),
        (lambda j: j.update(headline_accuracy=1.0), "unexpected keys \\['headline_accuracy'\\]"),
        (lambda j: j["summary"].update(accuracy=1.0), "summary is not what"),
    ]  # fmt: skip
    for forge, why in forgeries:
        forged = copy.deepcopy(judged)
        forge(forged)
        refused(forged, why)
    pinned = copy.deepcopy(judged)
    pinned["judge"]["model"] = "a-lenient-judge"
    for verdict in pinned["verdicts"]:
        verdict["judge"]["model_configured"] = "a-lenient-judge"
    refused(pinned, "capability line")  # still says judge_pinned=True
    # not re-signed: the digest gives it away
    text = (tmp_path / "judged.json").read_text().replace('"pass":3', '"pass":4', 1)
    (tmp_path / "judged.json").write_text(text)
    with pytest.raises(PointsArtifactError, match="the body hashes to"):
        read_artifact(tmp_path / "judged.json", JUDGED_SET)
    # forged answer sets, re-signed
    for change, why in (
        (lambda a: a["answers"].__setitem__(1, copy.deepcopy(a["answers"][0])),
         "answered twice"),
        (lambda a: a["answers"][0].update(status="skipped"), "neither completed"),
        (lambda a: a["answers"][0]["tokens"].update(input=1), "summary is not what"),
        (lambda a: a.update(status="incomplete"), "its answers disagree"),
        (lambda a: a.update(point_suite_sha256="0" * 64), "point_suite_sha256 differs"),
        (lambda a: a["answers"].pop(), "samples_per_point=1 times"),
        (lambda a: a.update(samples_per_point=10**12), "samples_per_point=1000000000000 times"),
        (lambda a: a["answers"][0]["tokens"].update(output=-5), "not a whole number"),
        (lambda a: (a["answers"][0]["tool_counts"].update(search=2),  # summary redone too
                    a.update(summary=as_stored(answer_summary(a["answers"])))),
         "tools_offered=none, yet"),
        (lambda a: a["capabilities"].update(ground_truth_visible_to_agent="\x1b[2Kno"),
         "is not one we record"),
        (lambda a: a["answers"][0].update(status="harness_error", error="x"), "holding an answer"),
        (lambda a: a.update(capability_line="ground_truth_visible_to_agent=False"),
         "capability line is not its capabilities"),
        (lambda a: a["answers"][0].update(cost={"usd": 0.5, "source": "not_reported"}),
         "a cost stated as not reported"),
        (lambda a: a["answers"][0].update(extra=1), "unexpected keys \\['extra'\\]"),
    ):  # fmt: skip
        forged_answers = copy.deepcopy(answers)
        change(forged_answers)
        with pytest.raises(PointsArtifactError, match=why):
            verify_answers(forged_answers, points)
    # a point file changed since the answers were given
    moved = [Point(**{**p.__dict__, "question": p.question + " (edited)"}) for p in points]
    with pytest.raises(PointsArtifactError, match="differs"):
        verify_answers(answers, moved)


@pytest.fixture()
def folder(points: list[Point], tmp_path: Path) -> Path:
    folder = tmp_path / "points"
    folder.mkdir()
    source = shared_path("data", "pitfall", "points")
    (folder / "META.md").write_text((source / "META.md").read_text(encoding="utf-8"))
    for p in points:
        (folder / p.path.name).write_text(p.text, encoding="utf-8")
    return folder


def test_answer_judge_verify_from_the_command_line(
    server: tuple[Chat, str], points: list[Point], folder: Path, tmp_path: Path
) -> None:
    state, url = server
    state.agent = knows(points, lambda i, n: n == 1)  # right once, then wrong
    where = ["--points-dir", str(folder), "--base-url", url]
    answers, judged = str(tmp_path / "answers.json"), str(tmp_path / "judged.json")
    done = _cli("answer", "--out", answers, *where, "--model", "m", "--samples", "2")
    assert done.returncode == 0, done.stderr
    assert f"answered {len(points)} point(s) x 2" in done.stdout
    assert "cost not reported" in done.stdout
    done = _cli("judge", answers, "--out", judged, *where, "--stride", "2")
    assert done.returncode == 0, done.stderr
    assert "PASS 5  FAIL 5  HARNESS_ERROR 0" in done.stdout
    done = _cli("verify", judged, "--answers", answers, "--points-dir", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Verified judged set {judged}: {2 * len(points)} verdict(s)" in done.stdout
    assert "pass@1 0.5000 over 5 point(s)" in done.stdout
    assert "pass@2 1.0000 over 5 point(s)" in done.stdout
    assert (
        "accuracy 5/10 = 0.5000" in done.stdout and "too narrow with several samples" in done.stdout
    )
    assert (
        f"suite: 5 of the 5 point(s) in {folder} (the whole suite); answers complete" in done.stdout
    )
    done = _cli("verify", answers, "--points-dir", str(folder))
    assert done.returncode == 0 and "Verified answer set" in done.stdout
    done = _cli("verify", judged, "--points-dir", str(folder))
    assert done.returncode == 1 and "--answers" in done.stdout
    (tmp_path / "half.json").write_text(Path(judged).read_text()[:500])
    done = _cli("verify", str(tmp_path / "half.json"), "--answers", answers,
                "--points-dir", str(folder))  # fmt: skip
    assert done.returncode == 1 and "truncated" in done.stdout
    (tmp_path / "deep.json").write_text('{"body":' + "[" * 100_000 + "]" * 100_000 + "}")
    done = _cli("verify", str(tmp_path / "deep.json"), "--points-dir", str(folder))
    assert done.returncode == 1 and "nested too deeply" in done.stdout, done.stderr
    body = read_artifact(judged, JUDGED_SET)
    del body["controls"]["negative"]
    write_artifact(tmp_path / "forged.json", body)  # re-signed
    done = _cli("verify", str(tmp_path / "forged.json"), "--answers", answers,
                "--points-dir", str(folder))  # fmt: skip
    assert done.returncode == 1 and done.stdout.startswith("NOT verified: controls")
    assert "Verified" not in done.stdout and not done.stderr
    done = _cli("judge", answers, "--out", answers, *where)
    assert done.returncode == 2 and "--out is the answer set itself" in done.stderr
    assert read_artifact(answers, ANSWER_SET)["artifact_type"] == ANSWER_SET  # untouched
    # a judge that never answers one point in contract: the set is written, exit 1
    state.judge_hook = lambda prompt: "no contract" if points[3].question in prompt and (
        "Revenue" in prompt) else None  # fmt: skip
    done = _cli("judge", answers, "--out", judged, *where)
    assert done.returncode == 1 and "got no usable verdict" in done.stdout, done.stderr
    assert "HARNESS_ERROR 1" in done.stdout
    from harness.points.journal import journal_path

    assert journal_path(judged).exists()  # kept: the failed verdict can be asked again
    state.judge_hook = lambda prompt: None
    before = len(state.bodies)
    done = _cli("judge", answers, "--out", judged, *where, "--resume")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "resuming:" in done.stdout and "HARNESS_ERROR 0" in done.stdout
    assert len(state.bodies) - before == 1  # the one failed verdict asked again, no more
    assert not journal_path(judged).exists()
    # a judge that fails its positive control: exit 1 naming the point, nothing written
    state.judge_mode = "fails-positive"
    Path(judged).unlink()
    done = _cli("judge", answers, "--out", judged, *where)
    assert done.returncode == 1 and "positive control failed on point" in done.stderr
    assert not Path(judged).exists()
    # bad options and an output that cannot be written: refused before any call
    calls = len(state.bodies)
    for bad, why in (
        (["--stride", "0"], "must be at least 1"),
        (["--stability-k", "1"], "must be at least 2"),
        (["--workers", "0"], "must be at least 1"),
        (["--timeout", "0"], "more than 0 seconds"),
        (["--out", str(tmp_path / "no-such-folder" / "j.json")], "not a writable folder"),
    ):
        done = _cli("judge", answers, "--out", judged, *where, *bad)
        assert done.returncode == 2 and why in done.stderr, (bad, done.stderr)
    done = _cli("answer", "--out", answers, *where, "--model", "m", "--samples", "0")
    assert done.returncode == 2 and "must be at least 1" in done.stderr
    assert len(state.bodies) == calls  # nothing was sent
    # a journal left by an interrupted run: continued only when asked, only if it is ours
    another = '{"kind": "judge", "model": "another"}\n["k", 1]\n["torn'
    journal_path(judged).write_text(another)
    done = _cli("judge", answers, "--out", judged, *where)
    assert done.returncode == 2 and "pass --resume to continue it" in done.stderr
    done = _cli("judge", answers, "--out", judged, *where, "--resume")
    assert done.returncode == 2 and "belongs to another run" in done.stderr
    assert journal_path(judged).read_text() == another  # not ours: left as it was, torn tail too
    journal_path(judged).unlink()
    assert len(state.bodies) == calls
    # no key for an endpoint off this machine: said plainly, before any call (a loopback
    # endpoint may need none)
    remote = ("--base-url", "https://models.example/v1")
    done = _cli("answer", "--out", answers, *where, *remote, "--model", "m", key=None)
    assert done.returncode == 2 and "set OPENAI_API_KEY" in done.stderr
    assert len(state.bodies) == calls
    done = _cli("answer", "--out", answers, *where, "--model", "m", "--point-id", "no-such")
    assert done.returncode == 2 and "unknown point(s)" in done.stderr


def test_an_unreachable_agent_exits_1_with_the_set_written(
    points: list[Point], folder: Path, tmp_path: Path
) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once the probe closes
    out = tmp_path / "answers.json"
    done = _cli("answer", "--out", str(out), "--points-dir", str(folder), "--base-url",
                f"http://127.0.0.1:{port}/v1", "--model", "m", "--point-id", points[0].id,
                "--timeout", "2")  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "incomplete: 0 answer(s), 1 harness error(s)" in done.stdout
    body = read_artifact(out, ANSWER_SET)
    assert body["answers"][0]["status"] == "harness_error" and body["point_count"] == 1


def test_pitfall_answers_are_judged_again_under_our_controls(
    server: tuple[Chat, str], tmp_path: Path
) -> None:
    _, url = server
    points_dir = shared_path("data", "pitfall", "points")
    real = shared_path("data", "pitfall", "results", "2026-08-14-all-points-sol-xhigh.json")
    answers = str(tmp_path / "answers.json")
    done = _cli("import", str(real), "--points-dir", str(points_dir), "--answers-out", answers)
    assert done.returncode == 0, done.stderr
    assert "its 174 answer(s) ->" in done.stdout
    body = read_artifact(answers, ANSWER_SET)
    stated = json.loads(real.read_text(encoding="utf-8"))
    assert body["summary"]["tokens"]["input"] == stated["summary"]["agent_usage"]["input_tokens"]
    assert body["summary"]["tool_calls"] == 656 + 173  # web searches and shell commands
    assert body["summary"]["cost_usd"] is None  # the artifact states no cost
    assert "evidence_frozen=False" in body["capability_line"]
    assert [a["text"] for a in body["answers"]] == [r["answer"] for r in stated["results"]]
    points = load_points(points_dir)
    verify_answers(body, points)
    judged = plain(
        judge_answer_set(
            judge(url), typed(body, AnswerSet), points, stability_k=2, stride=29, workers=8
        )
    )
    figures = verify_judged(_stored(judged), body, points)
    # our loopback judge calls only a copy of the Ground Truth correct: every real answer fails
    assert (figures["pass"], figures["fail"], figures["harness_error"]) == (0, 174, 0)
    assert judged["controls"]["stability"]["items"] == 6


@pytest.mark.parametrize(
    ("message", "finish", "status", "text"),
    [
        ({"content": "half \ud800 an answer"}, "stop", "completed", "half \ufffd an answer"),
        ({"content": None, "refusal": "I can't help."}, "stop", "completed", "I can't help."),
        ({"content": None}, "stop", "harness_error", ""),  # neither answer nor refusal
        ({"content": "partial"}, "error", "harness_error", ""),  # the gateway failed
        ({"content": ["not", "text"]}, "stop", "harness_error", ""),
    ],
)
def test_a_reply_is_stored_cleaned_or_refused_as_a_failed_call(
    server: tuple[Chat, str],
    points: list[Point],
    message: dict[str, Any],
    finish: str,
    status: str,
    text: str,
) -> None:
    state, url = server
    state.agent_message, state.finish_reason = message, finish
    body = plain(answer_points(answerer(url), points[:1]))
    answer = body["answers"][0]
    assert (answer["status"], answer["text"]) == (status, text)
    if status == "harness_error":
        assert answer["attempts"] == 3 and answer["error"].startswith("agent call failed")
    canonical.dumps(body)  # storable as it is


def test_provider_figures_that_are_not_numbers_are_not_stored(
    server: tuple[Chat, str], points: list[Point]
) -> None:
    state, url = server
    state.agent_usage = {"cost": float("nan"), "prompt_tokens": 10**400}
    answer = plain(answer_points(answerer(url), points[:1]))["answers"][0]
    assert answer["status"] == "completed"
    assert answer["cost"] == {"usd": None, "source": "not_reported"}
    assert "input" not in answer["tokens"] and answer["tokens"]["output"] == 300
    state.agent_usage = {"cost": 0.0123}
    answer = plain(answer_points(answerer(url), points[:1]))["answers"][0]
    assert answer["cost"] == {"usd": 0.0123, "source": "provider"}
    priced = plain(answer_points(
        answerer(url, price_input_per_mtok=2.0, price_output_per_mtok=8.0,
                 price_cached_input_per_mtok=0.5),
        points[:1],
    ))["answers"][0]  # fmt: skip
    # 200 fresh input tokens at $2, 1000 cached at $0.5, 300 output at $8, per million
    assert priced["cost"]["usd"] == pytest.approx((200 * 2 + 1000 * 0.5 + 300 * 8) / 1e6)


def test_a_judge_reply_is_cleaned_and_a_model_id_that_is_not_text_dropped(
    server: tuple[Chat, str], points: list[Point]
) -> None:
    state, url = server
    state.judge_hook = lambda prompt: "Class: completely_correct\n\nfine \udc80 here"
    state.judge_model = ["not", "a", "string"]
    verdict = judge(url).judge(points[0].question, "an answer", points[0].ground_truth)
    assert verdict.judged_class == "completely_correct" and "\ufffd" in verdict.reason
    assert verdict.model_returned is None
    canonical.dumps(verdict.to_json())


def test_text_from_a_file_cannot_move_the_terminal_cursor() -> None:
    assert printable("ok\x1b[2K\rVerified \u202eevil") == "ok\\x1b[2K\\rVerified \\u202eevil"
    assert printable("精度 ok") == "精度 ok"


class Interrupted(BaseException):
    """The process stops mid-run (a kill, a power cut)."""


def test_an_interrupted_run_resumes_from_its_journal_without_paying_twice(
    server: tuple[Chat, str], points: list[Point], tmp_path: Path
) -> None:
    from dataclasses import dataclass

    from harness.points.journal import Journal, JournalError, journal_path

    state, url = server
    state.agent = knows(points, lambda i, n: i % 2 == 0)

    @dataclass
    class Dying(Answerer):
        left: int = 3

        def answer(self, point: Point, sample: int = 0) -> dict[str, Any]:
            if self.left == 0:
                raise Interrupted
            self.left -= 1
            return super().answer(point, sample)

    out = tmp_path / "answers.json"
    header = {"kind": "answer", "suite": "test"}
    journal = Journal(journal_path(out), header, resume=False)
    dying = Dying(AgentConfig(base_url=url, api_key="k", model="m", timeout=5))
    with pytest.raises(Interrupted):
        answer_points(dying, points, workers=1, journal=journal)
    journal.close()
    assert state.agent_calls == 3
    with pytest.raises(JournalError, match="pass --resume"):
        Journal(journal_path(out), header, resume=False)
    with pytest.raises(JournalError, match="belongs to another run"):
        Journal(journal_path(out), {**header, "suite": "other"}, resume=True)
    with journal_path(out).open("a") as torn:
        torn.write('["half a li')  # the process died mid-write
    journal = Journal(journal_path(out), header, resume=True)
    assert len(journal.done) == 3
    body = plain(answer_points(answerer(url), points, workers=2, journal=journal))
    journal.finish()
    assert state.agent_calls == len(points)  # the three answers were not asked for again
    assert body["status"] == "complete" and not journal_path(out).exists()
    verify_answers(_stored(body), points)

    # the judge: every call saved as it finishes; a resumed run asks only the rest
    state.bodies.clear()
    judge_answer_set(judge(url), typed(body, AnswerSet), points, stability_k=2, stride=2)
    full = len(state.bodies)

    @dataclass
    class DyingJudge(Judge):
        left: int = 0

        def _ask(self, prompt: str) -> Any:
            if self.left == 0:
                raise Interrupted
            self.left -= 1
            return super()._ask(prompt)

    judged_out = tmp_path / "judged.json"
    journal = Journal(journal_path(judged_out), {"kind": "judge"}, resume=False)
    dying_judge = DyingJudge(JudgeConfig(base_url=url, api_key="k", timeout=5), journal=journal,
                             left=full // 2)  # fmt: skip
    state.bodies.clear()
    with pytest.raises(Interrupted):
        judge_answer_set(
            dying_judge, typed(body, AnswerSet), points, stability_k=2, stride=2, workers=1
        )
    journal.close()
    assert len(state.bodies) == full // 2
    journal = Journal(journal_path(judged_out), {"kind": "judge"}, resume=True)
    resumed = Judge(JudgeConfig(base_url=url, api_key="k", timeout=5), journal=journal)
    judged = plain(
        judge_answer_set(
            resumed, typed(body, AnswerSet), points, stability_k=2, stride=2, workers=1
        )
    )
    journal.finish()
    assert len(state.bodies) == full  # half before the interruption, the rest after
    verify_judged(_stored(judged), _stored(body), points)


def test_a_journal_survives_line_separators_torn_tails_and_torn_characters(
    tmp_path: Path,
) -> None:
    from harness.points.journal import Journal

    path = tmp_path / ".out.journal.jsonl"
    journal = Journal(path, {"kind": "answer"}, resume=False)
    journal.put("a#0", {"text": "one\u2028two\u2029three\x85four 精度"})
    journal.put("b#0", {"text": "plain"})
    journal.close()
    assert path.read_bytes().isascii()  # no character can be read as a line break
    with path.open("ab") as file:
        file.write(b'["c#0", {"text": "\xe7\xb2')  # died inside a character, mid-line
    journal = Journal(path, {"kind": "answer"}, resume=True)
    assert journal.done["a#0"]["text"] == "one\u2028two\u2029three\x85four 精度"
    assert sorted(journal.done) == ["a#0", "b#0"]
    journal.put("c#0", {"text": "again"})  # appended after the torn tail was cut off
    journal.close()
    again = Journal(path, {"kind": "answer"}, resume=True)
    assert sorted(again.done) == ["a#0", "b#0", "c#0"]
    again.finish()
    assert not path.exists()


def test_usage_that_does_not_add_up_is_not_priced_and_a_filtered_reply_is_an_answer(
    server: tuple[Chat, str], points: list[Point]
) -> None:
    state, url = server
    state.agent_usage = {"prompt_tokens_details": {"cached_tokens": 5000}}  # > 1200 input
    cheap_cache = answerer(url, price_input_per_mtok=2.0, price_output_per_mtok=8.0,
                           price_cached_input_per_mtok=0.1)  # fmt: skip
    answer = plain(answer_points(cheap_cache, points[:1]))["answers"][0]
    assert answer["cost"] == {"usd": None, "source": "not_reported"}
    state.agent_usage = {}
    for message in ({"content": None}, {"content": ""}):  # the filter withheld the answer
        state.agent_message, state.finish_reason = message, "content_filter"
        answer = plain(answer_points(answerer(url), points[:1]))["answers"][0]
        assert (answer["status"], answer["text"]) == ("completed", ""), message
