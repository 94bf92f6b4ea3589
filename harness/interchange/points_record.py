"""A verified judged point set as an Every Eval Ever record.

The figures are the set's own, under seed 004's rules (``harness.points.metrics``):
accuracy over the judged answers with its 95% Wilson interval (harness errors outside
every denominator, counted beside it), each of the six classes' share with its interval,
and, where a point was answered more than once, unbiased pass@k. Where we hold the
judge's prompt (our own judged sets) the accuracy names its judge and the template under
``llm_scoring``; PITFALL's artifact does not hold its prompt, so its judge is named in
``additional_details`` instead of a template we would have to make up.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from harness.interchange.every_eval_ever import (
    SCHEMA_VERSION,
    InterchangeError,
    Source,
    continuous,
    epoch_seconds,
    model_info,
    text_details,
    validated,
)
from harness.interchange.judged import NOT_HELD, JudgedPoints
from harness.points.metrics import CLASSES, class_shares, pass_at_k
from harness.version import HARNESS_VERSION

EVALUATION = "pitfall.points"


def _dataset(judged: JudgedPoints) -> dict[str, Any]:
    return {
        "dataset_name": "pitfall-points",
        "source_type": "other",
        "additional_details": text_details(
            {
                "point_suite_sha256": judged.suite_sha256,
                "points": len(judged.point_ids),
                "samples_per_point": judged.samples_per_point,
                "format": "PITFALL point files: one Markdown file per point; the Ground Truth "
                "and Provenance are not in this record",
            }
        ),
    }


def _judge(judged: JudgedPoints) -> dict[str, str]:
    return text_details(
        {
            "judge_model": judged.judge_model,
            "judge_reasoning_effort": judged.judge_effort,
            "judge_prompt": None if judged.judge_prompt else NOT_HELD,
            "judge_reliability": judged.reliability,
            "classes": ", ".join(CLASSES),
        }
    )


def _accuracy(judged: JudgedPoints, dataset: dict[str, Any]) -> dict[str, Any]:
    figures = judged.figures()
    low, high = figures["accuracy_interval_95"]
    config = continuous(
        metric_id="accuracy",
        name="accuracy",
        kind="accuracy",
        unit="proportion",
        description=(
            "The share of judged answers the judge put in completely_correct (PASS); an "
            "answer in any of the five error classes is a FAIL; an answer without a usable "
            "verdict is a HARNESS_ERROR, outside the denominator and counted beside it."
        ),
        lower_is_better=False,
        bounds=(0, 1),
    )
    config["additional_details"] = _judge(judged)
    if judged.judge_prompt:
        config["llm_scoring"] = {
            "judges": [
                {
                    "model_info": model_info(
                        judged.judge_model,
                        text_details({"reasoning_effort": judged.judge_effort}),
                    )
                }
            ],
            "input_prompt": judged.judge_prompt,
        }
    return {
        "evaluation_result_id": f"{EVALUATION}.accuracy",
        "evaluation_name": EVALUATION,
        "source_data": dataset,
        "metric_config": config,
        "score_details": {
            "score": figures["accuracy"],
            "details": text_details(
                {
                    "pass": figures["pass"],
                    "fail": figures["fail"],
                    "harness_error": figures["harness_error"],
                    "class_counts": figures["class_counts"],
                }
            ),
            "uncertainty": {
                "confidence_interval": {
                    "lower": low,
                    "upper": high,
                    "confidence_level": 0.95,
                    "method": "wilson",
                },
                "num_samples": figures["judged"],
            },
        },
    }


def _classes(judged: JudgedPoints, dataset: dict[str, Any]) -> list[dict[str, Any]]:
    figures = judged.figures()
    results = []
    for name, share in class_shares(figures["class_counts"]).items():
        if share is None:
            continue
        value, low, high = share
        results.append(
            {
                "evaluation_result_id": f"{EVALUATION}.class_share.{name}",
                "evaluation_name": EVALUATION,
                "source_data": dataset,
                "metric_config": continuous(
                    metric_id=f"pit-harness.points.class_share.{name}",
                    name=f"share judged {name}",
                    kind="proportion",
                    unit="proportion",
                    description=(
                        f"The share of judged answers the judge put in the class {name} (one of "
                        "six; harness errors outside the denominator)."
                    ),
                    lower_is_better=name != CLASSES[0],
                    bounds=(0, 1),
                ),
                "score_details": {
                    "score": value,
                    "details": {"count": str(figures["class_counts"][name])},
                    "uncertainty": {
                        "confidence_interval": {
                            "lower": low,
                            "upper": high,
                            "confidence_level": 0.95,
                            "method": "wilson",
                        },
                        "num_samples": figures["judged"],
                    },
                },
            }
        )
    return results


def _pass_at_k(judged: JudgedPoints, dataset: dict[str, Any]) -> list[dict[str, Any]]:
    """Unbiased pass@k, the mean over points with at least k scored answers; only for a
    set with several answers per point (with one, pass@1 is the accuracy)."""
    if judged.samples_per_point < 2:
        return []
    per_point: dict[str, list[str]] = {}
    for answer in judged.answers:
        per_point.setdefault(answer.point_id, []).append(answer.outcome)
    results = []
    for k in range(1, judged.samples_per_point + 1):
        values = []
        for outcomes in per_point.values():
            scored = [o for o in outcomes if o != "HARNESS_ERROR"]
            if len(scored) >= k:
                values.append(pass_at_k(len(scored), scored.count("PASS"), k))
        if not values:
            continue
        results.append(
            {
                "evaluation_result_id": f"{EVALUATION}.pass_at_{k}",
                "evaluation_name": EVALUATION,
                "source_data": dataset,
                "metric_config": continuous(
                    metric_id="pass_at_k",
                    name=f"pass@{k}",
                    kind="pass_rate",
                    unit="proportion",
                    description=(
                        f"Unbiased pass@{k} (Chen et al. 2021) per point over its scored "
                        f"answers, averaged over the {len(values)} point(s) with at least {k}."
                    ),
                    lower_is_better=False,
                    bounds=(0, 1),
                    parameters={"k": k},
                ),
                "score_details": {
                    "score": sum(values) / len(values),
                    "details": {"points": str(len(values))},
                },
            }
        )
    return results


def points_record(
    judged: JudgedPoints, *, source: Source, retrieved_at: datetime
) -> dict[str, Any]:
    """The Every Eval Ever record of a verified judged set, validated."""
    if judged.figures()["judged"] == 0:
        raise InterchangeError("not a result: no answer in the set was judged")
    dataset = _dataset(judged)
    model = judged.agent_model or "undeclared"
    record = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{EVALUATION}/{model}/{judged.sha256.removeprefix('sha256:')[:16]}",
        "evaluation_timestamp": judged.started_at,
        "retrieved_timestamp": epoch_seconds(retrieved_at),
        "source_metadata": source.metadata(
            text_details(
                {
                    "artifact_type": judged.kind,
                    "artifact_sha256": judged.sha256,
                    "verification": judged.verified_by,
                    "capability_line": judged.capability_line,
                    "rankable": judged.rankable,
                    "not_rankable_because": judged.not_rankable_because,
                    "judged_from": judged.started_at,
                    "judged_to": judged.completed_at,
                }
            )
        ),
        "eval_library": {
            "name": judged.library[0],
            "version": judged.library[1],
            "additional_details": {"exported_by": f"pit-harness {HARNESS_VERSION}"},
        },
        "model_info": model_info(
            judged.agent_model, text_details({"reasoning_effort": judged.agent_effort})
        ),
        "evaluation_results": [
            _accuracy(judged, dataset),
            *_classes(judged, dataset),
            *_pass_at_k(judged, dataset),
        ],
    }
    return validated(record)
