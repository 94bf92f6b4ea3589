"""The six-class judge: an OpenAI-compatible chat-completions endpoint, our own prompt,
a strict contract, and seed 004's honesty rules.

The judge is sent the Question, the Answer and the Ground Truth, nothing else (a point's
Provenance never leaves this module: no function here takes it). Its reply must be
``Class: <one of the six>`` on the first line, then a non-empty decisive reason. A judge
that cannot be reached, times out, refuses or answers outside the contract is retried a
bounded number of times with backoff, and then the outcome is HARNESS_ERROR: never the
agent's failure, never its success.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.points.journal import Journal
from harness.points.markdown import Point
from harness.points.metrics import CLASSES, HARNESS_ERROR, fleiss_kappa, outcome, raw_agreement
from harness.points.replies import ChatClient, clean_text, model_id

DEFAULT_MODEL = "gpt-5.6-sol"  # the seed pins the judge
DEFAULT_EFFORT = "xhigh"


def is_pinned_model(returned: str) -> bool:
    """Whether the model a provider says it ran is the pinned judge or a dated snapshot
    of it (``gpt-5.6-sol-2026-08-01``), not a sibling (``gpt-5.6-sol-mini``)."""
    return re.fullmatch(re.escape(DEFAULT_MODEL) + r"(-\d{4}-\d{2}-\d{2})?", returned) is not None


PROMPT = """You are grading one answer to one question against its ground truth.
Compare only the Question, the Answer and the Ground Truth below, and put the Answer in
exactly one of six classes:

completely_correct: the final answer and every claim that affects the conclusion agree with the ground truth; no material error.
numeric_factual_error: a material quantity is wrong (an amount, ratio, count, price, date difference, probability or other quantifiable fact). A misread number belongs here.
non_numeric_factual_error: a material non-quantitative fact is wrong (an entity, event, a date itself, a status, direction, regime or rule, or what a source says).
analysis_assumption_error: the facts can stand, but the conclusion rests on an unsupported premise, proxy, causal assumption, extrapolation or boundary choice.
analysis_logic_error: facts and assumptions are acceptable, but the step from them to the conclusion is invalid (a calculation, comparison, condition, causal derivation or evidence-to-conclusion mapping). Correct numbers computed wrongly belong here.
other_error: empty, refused, off-topic, unparseable, missing a key output, or truly none of the above.

Rules: a misread number is numeric_factual_error; correct numbers with a wrong calculation
is analysis_logic_error. Getting wrong what happened is non_numeric_factual_error; right
facts with an unsupported assumption about why is analysis_assumption_error. With several
errors, choose the earliest decisive one in the answer's visible reasoning.

Reply with exactly this and nothing else (no headings, no code fences):
Class: <class>

<the shortest decisive reason for the class>

<Question>
{question}
</Question>

<Answer>
{answer}
</Answer>

<GroundTruth>
{ground_truth}
</GroundTruth>
"""


OPEN, CLOSE = (
    "<\uff1c\ufe64\u2039\u27e8\u2329\u3008\u02c2\u1438",
    ">\uff1e\ufe65\u203a\u27e9\u232a\u3009\u02c3\u1433",
)
TAG = re.compile(f"[{OPEN}]([^{OPEN}{CLOSE}]{{0,80}})[{CLOSE}]")
FILLERS = "/\\_-\u3164\u115f\u1160\uffa0"
SECTIONS = ("question", "answer", "groundtruth")


def _tag_name(inner: str) -> str:
    """What a tag's inside reads as once invisible and filler characters are gone."""
    return "".join(
        c
        for c in inner
        if not (c.isspace() or c in FILLERS or unicodedata.category(c) in ("Cf", "Cc", "Mn"))
    ).casefold()


def fenced(answer: str) -> str:
    """The answer with anything that reads as one of our section tags (``</Answer>``,
    ``< /answer >``, ``<Ground_Truth x=1>``, full-width brackets, invisible characters
    inside) written with entities, so an answer cannot close its own section and pose
    as the Ground Truth."""

    def neutral(match: re.Match[str]) -> str:
        if not _tag_name(match.group(1)).startswith(SECTIONS):
            return match.group(0)
        return f"&lt;{match.group(1)}&gt;"

    return TAG.sub(neutral, answer)


class JudgeOutputError(ValueError):
    """The judge's reply is outside the contract."""


def parse_verdict(text: str) -> tuple[str, str]:
    """(class, decisive reason) from a reply: ``Class: <class>`` first, then a reason."""
    lines = text.replace("\r\n", "\n").strip().split("\n")
    first = lines[0]
    if not first.startswith("Class: "):
        raise JudgeOutputError(f"the first line must be 'Class: <class>', not {first[:80]!r}")
    judged = first[len("Class: ") :].strip()
    if judged not in CLASSES:
        raise JudgeOutputError(
            f"unknown evaluation class {judged[:80]!r}; allowed: {', '.join(CLASSES)}"
        )
    reason = "\n".join(lines[1:]).strip()
    if not reason:
        raise JudgeOutputError("a class without its decisive reason")
    return judged, reason


@dataclass(frozen=True)
class JudgeConfig:
    base_url: str
    api_key: str
    model: str = DEFAULT_MODEL
    effort: str = DEFAULT_EFFORT
    timeout: float = 600.0
    attempts: int = 3
    backoff: float = 1.0  # seconds before the second attempt, doubled after each


@dataclass
class Verdict:
    judged_class: str | None
    reason: str
    outcome: str
    model_configured: str
    model_returned: str | None
    effort: str
    attempts: int
    latency_seconds: float
    judged_at: str
    raw: str = ""
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "class": self.judged_class,
            "decisive_reason": self.reason,
            "outcome": self.outcome,
            "judge": {
                "model_configured": self.model_configured,
                "model_returned": self.model_returned,
                "effort": self.effort,
            },
            "attempts": self.attempts,
            "latency_seconds": round(self.latency_seconds, 3),
            "judged_at": self.judged_at,
            "raw": self.raw,
            "error": self.error,
        }


@dataclass
class Judge:
    config: JudgeConfig
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    _chat: ChatClient = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    journal: Journal | None = field(default=None, repr=False)
    _seen: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self._chat = ChatClient(self.config.base_url, self.config.api_key, self.config.timeout)

    def _journal_key(self, prompt: str) -> str:
        """The prompt's digest and how many times it was asked before in this run (the
        stability check asks the same prompt k times)."""
        digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:32]
        with self._lock:
            seen = self._seen.get(digest, 0)
            self._seen[digest] = seen + 1
        return f"{digest}#{seen}"

    def judge(self, question: str, answer: str, ground_truth: str) -> Verdict:
        """One answer judged; HARNESS_ERROR (with the last error) if no attempt gives a
        verdict inside the contract. With a journal, a verdict it holds is not asked for
        again, and each new one is saved as it arrives."""
        prompt = PROMPT.format(question=question, answer=fenced(answer), ground_truth=ground_truth)
        if self.journal is None:
            return self._ask(prompt)
        key = self._journal_key(prompt)
        stored = self.journal.get(key)
        if stored is not None and stored["judged_class"] is not None:
            return Verdict(**stored)
        verdict = self._ask(prompt)
        self.journal.put(key, asdict(verdict))
        return verdict

    def _ask(self, prompt: str) -> Verdict:
        from datetime import UTC, datetime

        client = self._chat.get()
        started = time.monotonic()
        error, raw, returned = "", "", None
        for attempt in range(1, self.config.attempts + 1):
            if attempt > 1:
                self.sleep(self.config.backoff * 2 ** (attempt - 2))
            try:
                reply = client.chat.completions.create(
                    model=self.config.model,
                    messages=[{"role": "user", "content": prompt}],
                    reasoning_effort=self.config.effort,
                )
                returned = model_id(getattr(reply, "model", None))
                content = reply.choices[0].message.content
                raw = "" if content is None else clean_text(content, "the judge's content")
                judged, reason = parse_verdict(raw)
            except JudgeOutputError as exc:
                error = clean_text(f"invalid judge reply: {exc}", "error")
                continue
            except Exception as exc:  # unreachable, timeout, refusal, a malformed response
                error = clean_text(f"judge call failed: {type(exc).__name__}: {exc}"[:500], "error")
                continue
            return Verdict(
                judged, reason, outcome(judged), self.config.model, returned, self.config.effort,
                attempt, time.monotonic() - started, datetime.now(UTC).isoformat(), raw,
            )  # fmt: skip
        return Verdict(
            None, "", HARNESS_ERROR, self.config.model, returned, self.config.effort,
            self.config.attempts, time.monotonic() - started, datetime.now(UTC).isoformat(),
            raw, error,
        )  # fmt: skip

    def no_answer(self, error: str) -> Verdict:
        """The verdict on an answer the agent never gave (its call failed): nothing was
        judged, and the outcome is HARNESS_ERROR."""
        from datetime import UTC, datetime

        return Verdict(
            None, "", HARNESS_ERROR, self.config.model, None, self.config.effort, 0, 0.0,
            datetime.now(UTC).isoformat(), "", f"no answer to judge: {error}"[:500],
        )  # fmt: skip


class ControlFailed(RuntimeError):
    """The positive control failed: the point or the judge is broken, and no answer is
    scored until it is fixed."""


def positive_control(judge: Judge, point: Point) -> Verdict:
    """The Ground Truth, judged as the answer, must be completely_correct; otherwise the
    job aborts loudly, naming the point."""
    verdict = judge.judge(point.question, point.ground_truth, point.ground_truth)
    if verdict.judged_class != "completely_correct":
        got = verdict.judged_class or f"no verdict ({verdict.error})"
        raise ControlFailed(
            f"positive control failed on point {point.id}: its own Ground Truth was judged "
            f"{got}; the point or the judge is broken, and nothing is scored"
        )
    return verdict


def agreement_figures(ratings: list[list[str]]) -> dict[str, Any]:
    """Flip rate, raw agreement and Fleiss' kappa over usable ratings (None without any)."""
    if not ratings:
        return {"flip_rate": None, "raw_agreement": None, "fleiss_kappa": None}
    agreement = raw_agreement(ratings)
    return {
        "flip_rate": 1.0 - agreement,
        "raw_agreement": agreement,
        "fleiss_kappa": fleiss_kappa(ratings),
    }


def stability(
    judge: Judge, points: list[Point], answers: dict[str, str], k: int = 3, stride: int = 1
) -> dict[str, Any]:
    """Re-judge every ``stride``-th point's answer ``k`` times: the flip rate (items whose
    verdicts differ), raw agreement, and Fleiss' kappa beside it. An item with a judge
    error among its repeats is set apart, never counted as a flip."""
    if k < 2 or stride < 1:
        raise ValueError("stability needs k >= 2 repeats and a stride >= 1")
    sample = points[::stride]
    ratings: dict[str, list[str]] = {}
    errored: dict[str, list[str]] = {}
    replies: dict[str, list[str]] = {}
    for point in sample:
        verdicts = [
            judge.judge(point.question, answers[point.id], point.ground_truth) for _ in range(k)
        ]
        classes = [v.judged_class or HARNESS_ERROR for v in verdicts]
        (errored if HARNESS_ERROR in classes else ratings)[point.id] = classes
        replies[point.id] = [v.raw for v in verdicts]  # each class is parsed back from these
    return {
        "items": len(ratings),
        "repeats": k,
        "stride": stride,
        **agreement_figures(list(ratings.values())),
        "ratings": ratings,
        "items_with_harness_errors": errored,
        "replies": replies,
    }


def control_record(verdict: Verdict) -> dict[str, Any]:
    """What a control keeps of its verdict: enough to parse it back."""
    return {"class": verdict.judged_class, "raw": verdict.raw, "error": verdict.error}


DIGITS = re.compile(r"\d+(?:\.\d+)?")


def perturbed(text: str) -> str | None:
    """The text with every number changed (each digit run scaled and shifted), or None
    when it holds no digit."""
    if not DIGITS.search(text):
        return None

    def change(match: re.Match[str]) -> str:
        value = match.group(0)
        if "." in value:
            whole, frac = value.split(".")
            return f"{int(whole) * 3 + 7}.{frac}"
        return str(int(value) * 3 + 7)

    return DIGITS.sub(change, text)


def control_passed(check: str, judged_class: str | None) -> bool:
    """Whether a negative control held: an empty answer must be other_error; a wrong
    answer must get a verdict, and not completely_correct."""
    if check == "empty_answer":
        return judged_class == "other_error"
    return judged_class is not None and judged_class != "completely_correct"


def negative_controls(judge: Judge, point: Point) -> dict[str, Any]:
    """Answers that must not pass: an empty answer must be other_error, and the Ground
    Truth with its numbers changed must not be completely_correct (a point without
    digits gets its conclusion negated instead). A failure flags the point and the
    judge in the record; it does not abort the job."""
    empty = judge.judge(point.question, "", point.ground_truth)
    changed = perturbed(point.ground_truth)
    kind = "numbers_perturbed"
    if changed is None:
        kind = "conclusion_negated"
        changed = f"It is not the case that: {point.ground_truth}"
    wrong = judge.judge(point.question, changed, point.ground_truth)
    checks = {
        "empty_answer": {
            **control_record(empty),
            "passed": control_passed("empty_answer", empty.judged_class),
        },
        kind: {**control_record(wrong), "passed": control_passed(kind, wrong.judged_class)},
    }
    return {
        "point_id": point.id,
        "checks": checks,
        "flagged": not all(c["passed"] for c in checks.values()),
    }
