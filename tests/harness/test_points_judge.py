"""The judge against a real chat-completions server on loopback (the real openai client
code runs): a good judge, garbage output, a judge that is down, one that fails the
positive control, one that flips."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from harness.points import load_points
from harness.points.judge import (
    ControlFailed,
    Judge,
    JudgeConfig,
    JudgeOutputError,
    parse_verdict,
    positive_control,
    stability,
)
from tests.conftest import shared_path


def _section(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*)\n</{tag}>", prompt, re.S)
    return found.group(1) if found else ""


class Server:
    """Chat completions; ``mode`` says how this judge behaves."""

    def __init__(self) -> None:
        self.mode = "good"
        self.calls = 0
        self.bodies: list[str] = []

    def reply(self, prompt: str) -> str:
        self.calls += 1
        if self.mode == "garbage":
            return "I think the answer is fine."
        if self.mode == "fails-positive":
            return "Class: other_error\n\nIt seems off-topic."
        answer, truth = _section(prompt, "Answer"), _section(prompt, "GroundTruth")
        if self.mode == "flips":
            return (
                "Class: completely_correct\n\nMatches."
                if self.calls % 2
                else "Class: analysis_logic_error\n\nThe step does not follow."
            )
        if not answer.strip():
            return "Class: other_error\n\nEmpty."
        if answer == truth:
            return "Class: completely_correct\n\nIt matches the ground truth."
        return "Class: numeric_factual_error\n\nA material number differs."


@pytest.fixture()
def server() -> Iterator[tuple[Server, str]]:
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            state.bodies.append(body)
            request = json.loads(body)
            content = state.reply(request["messages"][-1]["content"])
            data = json.dumps({
                "id": "c1", "object": "chat.completion", "created": 0,
                "model": "judge-2026-11-30",  # what the provider says it ran
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{http.server_address[1]}/v1"
    http.shutdown()


def judge_for(url: str) -> Judge:
    return Judge(JudgeConfig(base_url=url, api_key="test-key", timeout=5), sleep=lambda s: None)


@pytest.fixture(scope="module")
def points() -> list[Any]:
    return load_points(shared_path("data", "pitfall", "points"))[:6]


def test_the_contract_is_parsed_strictly() -> None:
    assert parse_verdict("Class: completely_correct\n\nBecause.") == (
        "completely_correct",
        "Because.",
    )
    assert (
        parse_verdict("Class: analysis_logic_error\r\nThe sum is wrong.")[0]
        == "analysis_logic_error"
    )
    for bad in ("Class: seventh_class\n\nx", "completely_correct\n\nx", "Class: completely_correct",
                "class: completely_correct\n\nx", ""):  # fmt: skip
        with pytest.raises(JudgeOutputError):
            parse_verdict(bad)


def test_a_good_judge_passes_the_controls_and_judges(
    server: tuple[Server, str], points: list[Any]
) -> None:
    state, url = server
    judge = judge_for(url)
    for point in points:
        assert positive_control(judge, point).judged_class == "completely_correct"
    point = points[0]
    wrong = judge.judge(point.question, "Revenue grew 99%.", point.ground_truth)
    assert (wrong.judged_class, wrong.outcome) == ("numeric_factual_error", "FAIL")
    assert wrong.model_configured == "gpt-5.6-sol" and wrong.effort == "xhigh"
    assert wrong.model_returned == "judge-2026-11-30"  # recorded beside the configured one
    empty = judge.judge(point.question, "", point.ground_truth)
    assert empty.judged_class == "other_error"
    sent = "".join(state.bodies)
    assert all(p.provenance not in sent for p in points)  # never sent to the judge
    assert json.loads(state.bodies[0])["reasoning_effort"] == "xhigh"


def test_garbage_output_is_a_harness_error_not_a_fail(
    server: tuple[Server, str], points: list[Any]
) -> None:
    state, url = server
    state.mode = "garbage"
    verdict = judge_for(url).judge(points[0].question, "an answer", points[0].ground_truth)
    assert verdict.outcome == "HARNESS_ERROR" and verdict.judged_class is None
    assert verdict.attempts == 3 and state.calls == 3  # bounded retries
    assert "invalid judge reply" in verdict.error


def test_a_judge_that_is_down_is_a_harness_error(points: list[Any]) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once the probe closes
    verdict = judge_for(f"http://127.0.0.1:{port}/v1").judge(
        points[0].question, "an answer", points[0].ground_truth
    )
    assert verdict.outcome == "HARNESS_ERROR" and "judge call failed" in verdict.error


def test_a_judge_failing_the_positive_control_aborts_naming_the_point(
    server: tuple[Server, str], points: list[Any]
) -> None:
    state, url = server
    state.mode = "fails-positive"
    with pytest.raises(ControlFailed, match=f"positive control failed on point {points[2].id}"):
        positive_control(judge_for(url), points[2])


def test_a_judge_that_flips_shows_its_flip_rate_and_kappa(
    server: tuple[Server, str], points: list[Any]
) -> None:
    state, url = server
    state.mode = "flips"
    answers = {p.id: "an answer" for p in points}
    report = stability(judge_for(url), points, answers, k=2, stride=2)
    assert report["items"] == 3 and report["repeats"] == 2
    # calls alternate correct / logic error: every item gets one of each
    assert report["flip_rate"] == 1.0 and report["raw_agreement"] == 0.0
    assert report["fleiss_kappa"] == pytest.approx(-1.0)
    assert all(sorted(r) == ["analysis_logic_error", "completely_correct"]
               for r in report["ratings"].values())  # fmt: skip


def test_the_prompt_carries_no_provenance_by_construction() -> None:
    import inspect

    from harness.points import judge as module

    assert "provenance" not in inspect.signature(module.Judge.judge).parameters
    assert "{provenance}" not in module.PROMPT and Path(module.__file__).exists()


def test_negative_controls_pass_with_a_good_judge_and_flag_a_lenient_one(
    server: tuple[Server, str], points: list[Any]
) -> None:
    from harness.points.judge import negative_controls, perturbed

    assert perturbed("Revenue rose 12% to 3.5 billion in 2023") == (
        "Revenue rose 43% to 16.5 billion in 6076"  # 12*3+7, 3*3+7 (.5 kept), 2023*3+7
    )
    assert perturbed("No numbers here") is None
    state, url = server
    report = negative_controls(judge_for(url), points[0])
    assert report["flagged"] is False
    assert report["checks"]["empty_answer"] == {"class": "other_error", "passed": True}
    state.mode = "flips"  # a judge that sometimes calls anything correct
    state.calls = 0
    lenient = negative_controls(judge_for(url), points[0])
    assert lenient["flagged"] is True  # recorded, not raised


def test_a_judging_run_on_the_loopback_judge_writes_sets_that_verify(
    server: tuple[Server, str], points: list[Any], tmp_path: Path
) -> None:
    from dataclasses import replace

    from harness.points.artifacts import (
        ANSWER_SET,
        JUDGED_SET,
        PointsArtifactError,
        answer_set,
        judged_set,
        read_artifact,
        write_artifact,
    )
    from harness.points.judge import negative_controls

    _, url = server
    judge = judge_for(url)
    answers = {
        p.id: {"text": p.ground_truth if n % 2 else "I cannot say.", "latency_seconds": 1.5,
               "tokens": {"input": 10, "output": 5}, "cost": 0.001, "tool_counts": {"search": 1}}
        for n, p in enumerate(points)
    }  # fmt: skip
    experiment = {"agent": {"model": "test-agent", "effort": "low"}, "harness": "pit-harness",
                  "instructions": "answer the question", "tools": [], "evidence_snapshot": None}  # fmt: skip
    answers_sha = write_artifact(tmp_path / "answers.json", answer_set(points, answers, experiment))
    body = read_artifact(tmp_path / "answers.json", ANSWER_SET)
    assert body["capability_line"] == (
        "ground_truth_visible_to_agent=False provenance_visible_to_agent=False"
    )
    controls = {
        "positive": {p.id: positive_control(judge, p).judged_class for p in points},
        "negative": [negative_controls(judge, p) for p in points[:2]],
    }
    verdicts = {
        a["point_id"]: judge.judge(
            next(p.question for p in points if p.id == a["point_id"]),
            a["text"],
            next(p.ground_truth for p in points if p.id == a["point_id"]),
        )
        for a in body["answers"]
    }
    write_artifact(tmp_path / "judged.json", judged_set(answers_sha, verdicts, controls))
    judged = read_artifact(tmp_path / "judged.json", JUDGED_SET)
    assert judged["answer_set_sha256"] == answers_sha
    assert judged["summary"]["pass"] == 3 and judged["summary"]["judged"] == 6
    assert judged["judge"] == {"model": "gpt-5.6-sol", "effort": "xhigh"}
    assert judged["verdicts"][0]["judge"]["model_returned"] == "judge-2026-11-30"
    # tampered: one verdict changed, the digest left alone
    text = (
        (tmp_path / "judged.json")
        .read_text()
        .replace('"class":"other_error"', '"class":"completely_correct"', 1)
    )
    (tmp_path / "judged.json").write_text(text)
    with pytest.raises(PointsArtifactError, match="the body hashes to"):
        read_artifact(tmp_path / "judged.json", JUDGED_SET)
    # one judge per set
    first = next(iter(verdicts))
    mixed = {**verdicts, first: replace(verdicts[first], model_configured="another-judge")}
    with pytest.raises(PointsArtifactError, match="one judge per judged set"):
        judged_set(answers_sha, mixed, controls)


def test_points_judge_from_the_command_line(
    server: tuple[Server, str], points: list[Any], tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys

    from harness.points.artifacts import JUDGED_SET, answer_set, read_artifact, write_artifact

    state, url = server
    folder = tmp_path / "points"
    folder.mkdir()
    source = shared_path("data", "pitfall", "points")
    (folder / "META.md").write_text(
        (source / "META.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    for p in points:
        (folder / p.path.name).write_text(p.text, encoding="utf-8")
    answers = {p.id: {"text": p.ground_truth} for p in points}
    write_artifact(tmp_path / "answers.json", answer_set(points, answers, {"agent": "copy"}))

    def judge(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "harness.cli", "points", "judge", str(tmp_path / "answers.json"),
             "--out", str(tmp_path / "judged.json"), "--points-dir", str(folder),
             "--base-url", url, "--stride", "3", *extra],
            capture_output=True, text=True, check=False,
            env={**os.environ, "OPENAI_API_KEY": "test-key"},
        )  # fmt: skip

    done = judge()
    assert done.returncode == 0, done.stderr
    assert f"judged {len(points)} answer(s)" in done.stdout and "PASS 6  FAIL 0" in done.stdout
    judged = read_artifact(tmp_path / "judged.json", JUDGED_SET)
    assert judged["controls"]["stability"]["items"] == 2
    (tmp_path / "judged.json").unlink()
    state.mode = "fails-positive"
    refused = judge()
    assert refused.returncode == 1 and "positive control failed on point" in refused.stderr
    assert not (tmp_path / "judged.json").exists()  # nothing scored, nothing written
