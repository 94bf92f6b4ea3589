"""Judging 1,000 answers against a loopback judge that answers in 200 ms, at the
concurrency a judge job runs at, beside the ideal.

The answers are 100 synthetic points answered 10 times each by a demo reader; the judge
is the demo judge behind a fixed 200 ms delay. A judge job makes more calls than there are
answers (the positive and three negative controls per point, and the stability sample),
so two ideals are printed: the issue's (answers x latency / concurrency) and the one over
every call the job made (calls x latency / concurrency). The target is the second within
1.5x; the first says what the controls cost.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

from harness.points import demo
from harness.points.answer import AgentConfig, Answerer
from harness.points.judge import Judge, JudgeConfig
from harness.points.markdown import load_points
from harness.points.run import answer_points, judge_answer_set

LATENCY = 0.2
POINTS = 100
SAMPLES = 10
CONCURRENCY = int(os.environ.get("PITWEB_BENCH_JUDGE_CONCURRENCY", "32"))
META = Path(__file__).resolve().parents[1] / "examples" / "points" / "META.md"


def _points(folder: Path) -> None:
    (folder / "META.md").write_text(META.read_text())
    for n in range(POINTS):
        (folder / f"p-{n}.md").write_text(
            f"# p-{n}\n\n## Question\n\nWhat is {n} plus {n}?\n\n## Ground Truth\n\n"
            f"<details>\n<summary>Hidden</summary>\n\n{2 * n}, the sum of {n} and {n}.\n\n"
            "</details>\n\n## Provenance\n\n<details>\n<summary>Audit</summary>\n\n"
            "synthetic, for the benchmark\n\n</details>\n"
        )


class _Slow(demo._Handler):
    calls = 0
    lock = threading.Lock()

    def do_POST(self) -> None:
        time.sleep(LATENCY)  # the judge's latency, simulated
        with _Slow.lock:
            _Slow.calls += 1
        super().do_POST()


def rows() -> list[tuple[str, str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _points(folder)
        points = load_points(folder)
        fast = demo.demo_server(0, points)
        slow = demo.demo_server(0, points)
        slow.RequestHandlerClass = _Slow
        slow.request_queue_size = 256
        for server in (fast, slow):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            reader = Answerer(
                AgentConfig(base_url=demo.base_url(fast), api_key="none",
                            model=next(iter(demo.READERS)), timeout=30)
            )  # fmt: skip
            answers = answer_points(reader, points, samples=SAMPLES, workers=8)
            judge = Judge(
                JudgeConfig(base_url=demo.base_url(slow), api_key="none",
                            model=demo.DEMO_MODEL, effort="none", timeout=30)
            )  # fmt: skip
            started = time.perf_counter()
            body = judge_answer_set(judge, answers, points, workers=CONCURRENCY)
            wall = time.perf_counter() - started
        finally:
            for server in (fast, slow):
                server.shutdown()
                server.server_close()
    judged = len(body.verdicts)
    ideal_answers = judged * LATENCY / CONCURRENCY
    ideal_calls = _Slow.calls * LATENCY / CONCURRENCY
    ratio = wall / ideal_calls
    return [
        (f"judge {judged} answers, {LATENCY * 1000:.0f} ms judge, concurrency {CONCURRENCY}",
         f"{wall:.1f} s", ""),
        ("   ideal over the answers alone", f"{ideal_answers:.1f} s",
         f"{wall / ideal_answers:.1f}x (the controls' calls included in the wall time)"),
        (f"   ideal over every call the job made ({_Slow.calls})", f"{ideal_calls:.1f} s",
         f"{ratio:.2f}x, target 1.5x" + ("  met" if ratio <= 1.5 else "  MISSED")),
    ]  # fmt: skip


if __name__ == "__main__":
    for row in rows():
        print("  ".join(row))
