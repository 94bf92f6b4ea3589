"""A verified judged point set as an Inspect eval log (the ``.json`` format, log schema
version 2), written here from plain data: the harness never imports ``inspect_ai``. The
tests read every log back with Inspect's own reader (``inspect_ai.log.read_eval_log``)
and list it as Inspect lists a log folder.

The log is named as Inspect names its logs, ``<created>_<task>_<id>.json``, the time with
its colons and plus sign as dashes, so Inspect's listing reads the task and id from the
name. Its status is ``success`` (only a verified set is exported); its samples are the
judged answers, one per (point, answer): the id is the point's, the epoch the answer's
number (1 for a set answered once per point), the input the point's Question, the target
empty (the Ground Truth is not exported: a sealed set's stays hidden; the point is bound
by its hashes in the sample's metadata), the answer as the model's output, and two
scores: ``verdict`` (``C`` for completely_correct, ``I`` for any of the five error
classes) and ``error_class`` (the class itself), each with the judge's decisive reason.
An answer with no usable verdict (a harness error) has no score, and its error says so:
it is neither a pass nor a fail.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.interchange.judged import JudgedAnswer, JudgedPoints
from harness.points.metrics import CLASSES, class_shares
from harness.version import HARNESS_VERSION

TASK = "pitfall_points"
LOG_VERSION = 2
CORRECT, INCORRECT = "C", "I"


def _clean(component: str) -> str:
    """A file name component as Inspect cleans one (``_ / : +`` become ``-``), so the
    name splits back into its time, task and id on ``_``."""
    for char in "_/:+":
        component = component.replace(char, "-")
    return component


def log_id(judged: JudgedPoints) -> str:
    """The log's id (Inspect's ``task_id``, ``eval_id`` and ``run_id``): 22 characters
    of the set's digest, as long as Inspect's own, so one set always has one log name."""
    return judged.sha256.removeprefix("sha256:")[:22]


def log_name(judged: JudgedPoints) -> str:
    return f"{_clean(judged.started_at)}_{_clean(TASK)}_{log_id(judged)}.json"


def _usage(tokens: dict[str, int]) -> dict[str, int]:
    """Token counts as Inspect's ``ModelUsage`` names them (PITFALL's ``*_tokens`` and our
    short names alike); counts it has no name for stay in the sample's metadata."""
    got = {k.removesuffix("_tokens"): v for k, v in tokens.items()}
    usage = {
        "input_tokens": got.get("input", 0),
        "output_tokens": got.get("output", 0),
        "total_tokens": got.get("input", 0) + got.get("output", 0),
    }
    if "cached_input" in got:
        usage["input_tokens_cache_read"] = got["cached_input"]
    if "reasoning_output" in got:
        usage["reasoning_tokens"] = got["reasoning_output"]
    return usage


def _sample(judged: JudgedPoints, answer: JudgedAnswer) -> dict[str, Any]:
    model = judged.agent_model or "undeclared"
    reply = {"role": "assistant", "content": answer.answer, "source": "generate", "model": model}
    sample: dict[str, Any] = {
        "id": answer.point_id,
        "epoch": answer.sample + 1,
        "input": answer.question,
        "target": "",
        "messages": [{"role": "user", "content": answer.question, "source": "input"}, reply],
        "output": {
            "model": model,
            "choices": [{"message": reply, "stop_reason": "stop"}],
            "completion": answer.answer,
        },
        "metadata": {
            "point_sha256": answer.point_sha256,
            "question_sha256": answer.question_sha256,
            "outcome": answer.outcome,
            "ground_truth": "not exported (bound by point_sha256)",
            "tokens": answer.tokens,
        },
        "model_usage": {model: _usage(answer.tokens)} if answer.tokens else {},
    }
    if answer.judged_class is None:
        sample["error"] = {
            "message": f"HARNESS_ERROR (no usable verdict; not scored): {answer.reason}",
            "traceback": "",
            "traceback_ansi": "",
        }
        return sample
    passed = answer.judged_class == CLASSES[0]
    sample["scores"] = {
        "verdict": {
            "value": CORRECT if passed else INCORRECT,
            "answer": answer.judged_class,
            "explanation": answer.reason,
            "metadata": {"outcome": answer.outcome},
        },
        "error_class": {"value": answer.judged_class, "explanation": answer.reason},
    }
    return sample


def _results(judged: JudgedPoints) -> dict[str, Any]:
    figures = judged.figures()
    scored, errors = figures["judged"], figures["harness_error"]
    verdict: dict[str, Any] = {}
    if figures["accuracy"] is not None:
        low, high = figures["accuracy_interval_95"]
        verdict = {
            "accuracy": {"name": "accuracy", "value": figures["accuracy"]},
            "wilson_95_low": {"name": "wilson_95_low", "value": low},
            "wilson_95_high": {"name": "wilson_95_high", "value": high},
        }
    shares = {
        name: {"name": name, "value": share[0]}
        for name, share in class_shares(figures["class_counts"]).items()
        if share is not None
    }
    return {
        "total_samples": len(judged.answers),
        "completed_samples": scored,
        "scores": [
            {
                "name": "verdict",
                "scorer": "verdict",
                "scored_samples": scored,
                "unscored_samples": errors,
                "metrics": verdict,
                "metadata": {"harness_errors": "outside every denominator"},
            },
            {
                "name": "error_class",
                "scorer": "error_class",
                "scored_samples": scored,
                "unscored_samples": errors,
                "metrics": shares,
            },
        ],
    }


def inspect_log(judged: JudgedPoints) -> dict[str, Any]:
    """The Inspect eval log of a verified judged set, as plain JSON data."""
    ident = log_id(judged)
    model = judged.agent_model or "undeclared"
    return {
        "version": LOG_VERSION,
        "status": "success",
        "eval": {
            "eval_id": ident,
            "run_id": ident,
            "created": judged.started_at,
            "task": TASK,
            "task_id": ident,
            "task_version": 0,
            "dataset": {
                "name": "pitfall-points",
                "location": f"point suite {judged.suite_sha256}",
                "samples": len(judged.point_ids),
                "sample_ids": judged.point_ids,
                "shuffled": False,
            },
            "model": model,
            "model_roles": {"grader": {"model": judged.judge_model, "config": {}, "args": {}}},
            "config": {"epochs": judged.samples_per_point},
            "packages": {"pit-harness": HARNESS_VERSION},
            "metadata": {
                "artifact_type": judged.kind,
                "artifact_sha256": judged.sha256,
                "verification": judged.verified_by,
                "agent_effort": judged.agent_effort,
                "judge_model": judged.judge_model,
                "judge_effort": judged.judge_effort,
                "judge_reliability": judged.reliability,
                "capability_line": judged.capability_line,
                "rankable": judged.rankable,
                "not_rankable_because": judged.not_rankable_because,
                "classes": list(CLASSES),
            },
        },
        "plan": {"name": "plan", "steps": [], "config": {}},
        "results": _results(judged),
        "stats": {"started_at": judged.started_at, "completed_at": judged.completed_at},
        "samples": [_sample(judged, a) for a in judged.answers],
    }


def write_inspect_log(judged: JudgedPoints, folder: str | os.PathLike[str]) -> Path:
    """Write the set's Inspect log into ``folder`` (made if missing) under the name
    Inspect would give it; return its path."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    path = target / log_name(judged)
    text = json.dumps(inspect_log(judged), indent=2, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path
