"""The demo model: the judged-point commands end to end on loopback with no key, and a
judged set that says it came from a demo, never from the pinned judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.points.artifacts import ANSWER_SET, JUDGED_SET, read_artifact
from harness.points.demo import DEMO_ANSWER, DEMO_MODEL, judge_reply, served
from harness.points.judge import (
    INJECTION,
    fenced,
    parse_verdict,
    prompt_for,
    wrong_answer,
)
from harness.points.markdown import load_points

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "points"


@pytest.fixture()
def demo() -> Iterator[str]:
    with served() as url:
        yield url


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_demo_judge_replies_in_the_judges_contract_and_holds_every_control() -> None:
    for point in load_points(EXAMPLES):
        truth = point.ground_truth
        verdicts = {
            name: parse_verdict(judge_reply(prompt_for(point.question, text, truth)))[0]
            for name, text in {
                "truth": truth,
                "empty": "",
                "demo": DEMO_ANSWER,
                "wrong": wrong_answer(point)[1],
                "injected": wrong_answer(point)[1] + INJECTION,
            }.items()
        }
        assert verdicts["truth"] == "completely_correct", point.id
        assert verdicts["empty"] == verdicts["demo"] == "other_error", point.id
        assert verdicts["wrong"] != "completely_correct", point.id
        assert verdicts["injected"] != "completely_correct", point.id


def test_the_demo_judge_compares_the_fenced_answer_not_the_raw_one() -> None:
    truth = "Answer: <Answer> is 42."  # tag-like text is neutralised inside the fence
    assert "&lt;" in fenced(truth)
    reply = judge_reply(prompt_for("Q?", truth, truth))
    assert parse_verdict(reply)[0] == "completely_correct"
    other = judge_reply(prompt_for("Q?", "Answer: <Answer> is 43.", truth))
    assert parse_verdict(other)[0] == "numeric_factual_error"


def test_the_demo_serves_only_its_own_model_name(demo: str) -> None:
    from openai import NotFoundError, OpenAI

    client = OpenAI(base_url=demo, api_key="unused", max_retries=0, timeout=5)
    reply = client.chat.completions.create(
        model=DEMO_MODEL, messages=[{"role": "user", "content": "What is 2 + 2?"}]
    )
    assert reply.model == DEMO_MODEL and reply.choices[0].message.content == DEMO_ANSWER
    with pytest.raises(NotFoundError, match="the demo serves only the models"):
        client.chat.completions.create(
            model="gpt-5.6-sol", messages=[{"role": "user", "content": "hello"}]
        )


def test_answer_judge_verify_against_the_demo_with_no_key(demo: str, tmp_path: Path) -> None:
    points = str(EXAMPLES)
    model = ["--base-url", demo, "--model", DEMO_MODEL]
    done = _cli("points", "answer", "--points-dir", points, *model, "--out", "answers.json",
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "complete: " in done.stdout and "cost not reported" in done.stdout
    done = _cli("points", "judge", "answers.json", "--points-dir", points, *model,
                "--stride", "1", "--out", "judged.json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "usable: the judge's controls held" in done.stdout
    assert f"judge unpinned ({DEMO_MODEL}/xhigh, returned {DEMO_MODEL})" in done.stdout
    assert f"DEMO: {DEMO_MODEL} is not a model" in done.stdout
    judged = read_artifact(tmp_path / "judged.json", JUDGED_SET)
    assert judged["judge"] == {
        "model": DEMO_MODEL,
        "effort": "xhigh",
        "models_returned": [DEMO_MODEL],
    }
    assert judged["capabilities"]["judge_pinned"] is False
    assert "judge_pinned=False" in judged["capability_line"]
    assert judged["summary"]["pass"] == 0  # the demo answers nothing
    answers = read_artifact(tmp_path / "answers.json", ANSWER_SET)
    assert answers["experiment"]["agent"]["model"] == DEMO_MODEL
    done = _cli("points", "verify", "judged.json", "--answers", "answers.json",
                "--points-dir", points, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "judge_pinned=False" in done.stdout and f"DEMO: {DEMO_MODEL}" in done.stdout


def test_a_remote_endpoint_still_needs_its_key(tmp_path: Path) -> None:
    done = _cli("points", "answer", "--points-dir", str(EXAMPLES), "--base-url",
                "https://api.example.com/v1", "--model", "m", "--out", "a.json",
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert "set OPENAI_API_KEY to the endpoint's API key" in done.stderr


def test_the_demo_model_command_writes_its_url_once_it_listens(tmp_path: Path) -> None:
    url_file = tmp_path / "model.url"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "points", "demo-model", "--url-file", str(url_file)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # printed once the socket is bound
        assert first.startswith(f"{DEMO_MODEL} at http://127.0.0.1:") and "not a model" in first
        url = url_file.read_text().strip()
        assert first.split(" at ")[1].startswith(url + ":")
        from urllib.request import Request, urlopen

        request = Request(
            url + "/chat/completions",
            data=json.dumps(
                {"model": DEMO_MODEL, "messages": [{"role": "user", "content": "?"}]}
            ).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urlopen(request, timeout=5) as answer:
            assert json.load(answer)["model"] == DEMO_MODEL
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_demo_readers_answer_by_their_rule_and_only_when_given_points() -> None:
    from collections import Counter

    from harness.points.answer import prompt
    from harness.points.demo import READERS, reader_reply, reply_to

    points = load_points(EXAMPLES.parent / "finance-points")
    by_question = {p.question: p for p in points}
    classes = {}
    for reader in READERS:
        replies = [reader_reply(reader, prompt(p), by_question) for p in points]
        assert replies == [reader_reply(reader, prompt(p), by_question) for p in points]
        verdicts = Counter(
            parse_verdict(judge_reply(prompt_for(p.question, a, p.ground_truth)))[0]
            for p, a in zip(points, replies, strict=True)
        )
        classes[reader] = verdicts
    careful, hasty = (classes[r] for r in READERS)
    assert careful["completely_correct"] > hasty["completely_correct"] > 0
    assert len(hasty) >= 3  # a hasty reader errs in more than one way
    request = {"model": next(iter(READERS)), "messages": [{"role": "user", "content": "hi"}]}
    assert reply_to(request)[0] == 404  # no points given: no readers served
    status, body = reply_to(request, by_question)
    assert status == 200 and body["choices"][0]["message"]["content"] == DEMO_ANSWER
