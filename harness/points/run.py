"""A judged-point run, both halves: answer every point (``answer_points``), then judge an
answer set under seed 004's order (``judge_answer_set``): the positive control on every
point first, and nothing is judged if one fails; then the negative controls, every
answer, and the stability sample."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from harness.points.answer import COMPLETED, Answerer
from harness.points.artifacts import answer_set, first_answers, judged_set
from harness.points.journal import Journal
from harness.points.judge import (
    Judge,
    JudgeReply,
    agreement_figures,
    control_record,
    negative_controls,
    positive_control,
    stability,
)
from harness.points.markdown import Point
from harness.points.model import Answer, AnswerSet, JudgedSet
from harness.progress import OnProgress


def _map(func: Callable[[Any], Any], items: Iterable[Any], workers: int) -> list[Any]:
    """``func`` over ``items`` on ``workers`` threads, results in the items' order; the
    first exception raised is raised here."""
    items = list(items)
    if workers <= 1:
        return [func(item) for item in items]
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        return list(pool.map(func, items))
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)  # nothing more is sent
        raise
    finally:
        pool.shutdown(wait=True)


def answer_points(
    answerer: Answerer,
    points: list[Point],
    samples: int = 1,
    workers: int = 4,
    journal: Journal | None = None,
    progress: OnProgress | None = None,
) -> AnswerSet:
    """Every point answered ``samples`` times, as an answer set. With a journal,
    answers it holds are not asked for again (failed calls are), and each new one is
    saved as it arrives. ``progress`` is told each answer as it arrives."""
    if samples < 1:
        raise ValueError("at least one answer per point")

    def one(job: tuple[Point, int]) -> dict[str, Any]:
        key = f"{job[0].id}#{job[1]}"
        stored = journal.get(key) if journal else None
        if stored is not None and stored["status"] == COMPLETED:
            return dict(stored)
        record = answerer.answer(*job)
        if journal:
            journal.put(key, record)
        return record

    jobs = [(p, n) for p in points for n in range(samples)]
    tally = _Tally(progress, len(jobs))
    records = _map(tally.counted(one), jobs, workers)
    return answer_set(points, records, answerer.config.experiment())


def judge_answer_set(
    judge: Judge,
    answers: AnswerSet,
    points: list[Point],
    stability_k: int = 3,
    stride: int = 10,
    workers: int = 4,
    progress: OnProgress | None = None,
) -> JudgedSet:
    """The judged set; ``ControlFailed`` (naming the point) before any answer is
    judged if the judge does not call a point's own Ground Truth completely_correct.

    The positive controls run first and alone (seed 004: nothing is judged before the
    reference holds); then the negative controls, the answers and the stability sample
    share one pool of ``workers`` threads, so no phase waits for the last calls of the one
    before it. ``progress`` is told each control, verdict and stability sample done
    (the stability sample's size is added to the total once it is drawn)."""
    by_id = {p.id: p for p in points}
    answered = [by_id[i] for i in sorted({a.point_id for a in answers.answers})]
    tally = _Tally(progress, 2 * len(answered) + len(answers.answers))
    positive = _map(
        tally.counted(lambda p: control_record(positive_control(judge, p))), answered, workers
    )

    def one(answer: Answer) -> JudgeReply:
        if answer.status != COMPLETED:
            return judge.no_answer(answer.error or "the agent gave no answer")
        point = by_id[answer.point_id]
        return judge.judge(point.question, answer.text, point.ground_truth)

    first = first_answers(answers)
    steady = [p for p in answered if p.id in first]
    with _Pool(workers) as pool:
        negative_later = pool.submit_all(
            tally.counted(lambda p: negative_controls(judge, p)), answered
        )
        verdicts_later = pool.submit_all(tally.counted(one), answers.answers)
        sample = stability(
            judge, steady, first, k=stability_k, stride=stride,
            mapper=lambda f, items: pool.results(pool.submit_all(*tally.phase(f, items))),
        ) if steady else {
            "items": 0, "repeats": stability_k, "stride": stride, **agreement_figures([]),
            "ratings": {}, "items_with_harness_errors": {}, "replies": {},
        }  # fmt: skip
        negative = pool.results(negative_later)
        verdicts = pool.results(verdicts_later)
    controls = {
        "positive": {p.id: c for p, c in zip(answered, positive, strict=True)},
        "negative": negative,
        "stability": sample,
    }
    keyed = {(a.point_id, a.sample): v for a, v in zip(answers.answers, verdicts, strict=True)}
    return judged_set(answers, keyed, controls)


class _Tally:
    """Calls done out of calls known, told to ``progress`` (from any of the pool's
    threads, so counted under a lock)."""

    def __init__(self, progress: OnProgress | None, total: int) -> None:
        self._progress, self._total, self._done = progress, total, 0
        self._lock = threading.Lock()

    def phase(
        self, func: Callable[[Any], Any], items: Iterable[Any]
    ) -> tuple[Callable[[Any], Any], list[Any]]:
        """A phase whose size was not known at the start: its items join the total."""
        listed = list(items)
        with self._lock:
            self._total += len(listed)
        return self.counted(func), listed

    def counted(self, func: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``func``, each call of it counted when it returns."""
        if self._progress is None:
            return func

        def call(item: Any) -> Any:
            result = func(item)
            with self._lock:
                self._done += 1
                done, total = self._done, self._total
            assert self._progress is not None
            self._progress(done, total)
            return result

        return call


class _Pool:
    """One pool of threads that several phases queue their calls on (first come, first
    served); with one worker, every call runs at once in this thread, in order."""

    def __init__(self, workers: int) -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None

    def submit_all(self, func: Callable[[Any], Any], items: Iterable[Any]) -> list[Future[Any]]:
        futures = []
        for item in items:
            if self._executor is not None:
                futures.append(self._executor.submit(func, item))
                continue
            done: Future[Any] = Future()
            try:
                done.set_result(func(item))
            except BaseException as exc:
                done.set_exception(exc)
            futures.append(done)
        return futures

    @staticmethod
    def results(futures: list[Future[Any]]) -> list[Any]:
        return [f.result() for f in futures]

    def __enter__(self) -> _Pool:
        return self

    def __exit__(self, kind: object, *rest: object) -> None:
        if self._executor is not None:  # on an error, nothing more is sent
            self._executor.shutdown(wait=True, cancel_futures=kind is not None)
