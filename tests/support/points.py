"""The judged-point engine's parts pointed at a loopback chat server: an answerer, a
judge, an agent that knows chosen answers, and the ``pit-harness points`` command."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from harness.points import Point
from harness.points.answer import AgentConfig, Answerer
from harness.points.judge import Judge, JudgeConfig


def answerer(url: str, **extra: Any) -> Answerer:
    config = AgentConfig(base_url=url, api_key="k", model="agent-under-test", effort="low",
                         timeout=5, **extra)  # fmt: skip
    return Answerer(config, sleep=lambda s: None)


def judge(url: str) -> Judge:
    return Judge(JudgeConfig(base_url=url, api_key="k", timeout=5), sleep=lambda s: None)


def knows(points: list[Point], correct: Callable[[int, int], bool | None]) -> Any:
    """An agent that answers point ``i``'s ``n``-th call (1-based) with its Ground Truth
    when ``correct(i, n)``, a wrong figure when False, and fails (HTTP 500) when None."""
    index = {p.question: i for i, p in enumerate(points)}
    seen: dict[int, int] = {}

    def agent(question: str, _: int) -> str | None:
        i = index[question]
        seen[i] = seen.get(i, 0) + 1
        verdict = correct(i, seen[i])
        if verdict is None:
            return None
        return points[i].ground_truth if verdict else "Revenue grew 99%."

    return agent


def points_cli(*args: str, key: str | None = "k") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    if key:
        env["OPENAI_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "points", *args],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
