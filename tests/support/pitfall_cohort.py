"""A PITFALL sealed cohort built in code the way PITFALL 0.17.0's tools write one
(``suite preregister``, ``shadow run``, ``suite finalize``, a hand-written label,
``shadow resolve``): the same fields, the same digests, the same commitment.

Its commitment and digests are computed here with ``json`` and ``hashlib`` directly,
not with the module under test. Every date is in the past, so a check against the
present (a label cannot resolve in the future) holds whenever the tests run.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections import Counter
from typing import Any

REGISTERED_AT = "2026-02-09T02:00:00+00:00"
AS_OF = "2026-02-10"
STARTED_AT = "2026-02-10T02:00:00+00:00"  # 10:00 in Shanghai, on the as-of date
COMPLETED_AT = "2026-02-10T02:30:00+00:00"
FINALIZED_AT = "2026-02-10T04:00:00+00:00"
WINDOW_END = "2026-11-30"
RESOLVED_AT = "2026-10-30"
RESOLVED_CREATED_AT = "2026-10-31T01:00:00+00:00"
MODELS = ("model-a", "model-b")
FAMILIES = ("rd", "rd", "factory", "factory", "cash", "cash")
# the sentences PITFALL's writers put in each artifact, word for word
PLAN_GUARDRAIL = (
    "Keep this full plan private until its cases are sealed. Publish the separate opaque "
    "commitment to an externally timestamped append-only surface before the first model run."
)
PUBLIC_GUARDRAIL = (
    "This hash binds the private plan bytes but does not independently prove when they "
    "existed; externally timestamp this artifact before the first run."
)
SEAL_GUARDRAIL = (
    "The SHA-256 commitment binds these bytes but does not independently prove when they "
    "existed; publish the artifact or digest to an externally timestamped append-only "
    "system before resolution."
)
SUITE_GUARDRAIL = (
    "Every member remains in the cohort, including failed attempts. Aggregate scores may be "
    "created only after every member has a verified matured resolution."
)


def digest(value: Any) -> str:
    encoded = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def committed(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with PITFALL's commitment over it."""
    body = {key: value for key, value in record.items() if key != "commitment"}
    return {
        **body,
        "commitment": {
            "algorithm": "sha256",
            "canonicalization": "json-sort-keys-utf8-v1",
            "payload_sha256": digest(body),
        },
    }


def recommitted(record: dict[str, Any]) -> dict[str, Any]:
    """A changed record committed again: what someone rewriting an artifact would do."""
    return committed(copy.deepcopy(record))


def scenario(index: int, as_of: str = AS_OF) -> dict[str, Any]:
    """An outcome-free live-shadow scenario (schema 2) on the Shanghai exchange."""
    ticker = f"60{index:04d}"
    return {
        "schema_version": 2,
        "id": f"cn-a-live-suite-{index}",
        "suite": "a_share_live_shadow_hard_v1",
        "mode": "live_shadow",
        "security": {
            "order_book_id": f"{ticker}.XSHG",
            "ticker": ticker,
            "name_as_of": f"测试公司{index}",
            "exchange": "SSE",
        },
        "as_of": as_of,
        "prediction_window": {"end": WINDOW_END, "description": "截至2026年三季度报告披露"},
        "target": {
            "event": "commercial_validation",
            "definition": "收入继续兑现",
            "criteria_mode": "all",
            "criteria": [
                {
                    "metric": "revenue_growth",
                    "comparison": ">=",
                    "value": 0.2,
                    "description": "收入增长至少20%",
                }
            ],
        },
        "prompt": "使用实时网络证据预测下一季度商业兑现。",
        "search_policy": {
            "mode": "live_web",
            "latest_published_at": as_of,
            "allowed_domains": ["sse.com.cn"],
        },
        "response_contract": {
            "type": "object",
            "required": ["event_probability", "prediction", "evidence_urls", "analysis_summary"],
            "properties": {
                "event_probability": {"type": "number", "minimum": 0, "maximum": 1},
                "prediction": {"type": "string", "enum": ["event", "no_event"]},
                "evidence_urls": {"type": "array", "items": {"type": "string"}},
                "analysis_summary": {"type": "string", "minLength": 1},
            },
            "additionalProperties": False,
        },
        "authoring_provenance": {"status": "unresolved_live_shadow"},
    }


def policy() -> dict[str, Any]:
    return {
        "required_models": list(MODELS),
        "reasoning_effort": "low",
        "repeats": 3,
        "required_web_search_calls": 1,
        "minimum_case_count": 6,
        "minimum_family_count": 3,
        "minimum_cases_per_family": 2,
        "primary_metric": "mean_brier_loss",
    }


def cases() -> list[dict[str, Any]]:
    """The plan's cases: slot, family, scenario and its digest."""
    found = []
    for index, family in enumerate(FAMILIES, start=1):
        source = scenario(index)
        found.append(
            {
                "slot_id": f"slot-{index}",
                "family": family,
                "scenario_source": source,
                "scenario_sha256": digest(source),
            }
        )
    return found


def plan(registered_at: str = REGISTERED_AT) -> dict[str, Any]:
    """The private plan ``suite preregister`` writes."""
    return committed(
        {
            "schema_version": 1,
            "artifact_type": "pitfall_sealed_suite_plan",
            "suite_id": "a-share-shadow-hard-2026",
            "registered_at": registered_at,
            "policy": policy(),
            "cases": cases(),
            "publication_guardrail": PLAN_GUARDRAIL,
        }
    )


def public(private: dict[str, Any]) -> dict[str, Any]:
    """The opaque public commitment ``suite preregister`` writes beside ``private``."""
    planned = private["cases"]
    return committed(
        {
            "schema_version": 1,
            "artifact_type": "pitfall_sealed_suite_plan_commitment",
            "suite_id": private["suite_id"],
            "registered_at": private["registered_at"],
            "case_count": len(planned),
            "family_counts": dict(sorted(Counter(c["family"] for c in planned).items())),
            "first_as_of": min(c["scenario_source"]["as_of"] for c in planned),
            "last_window_end": max(
                c["scenario_source"]["prediction_window"]["end"] for c in planned
            ),
            "required_model_count": len(private["policy"]["required_models"]),
            "repeats": private["policy"]["repeats"],
            "plan_commitment_sha256": private["commitment"]["payload_sha256"],
            "policy_sha256": digest(private["policy"]),
            "timestamp_guardrail": PUBLIC_GUARDRAIL,
        }
    )


def attempt(
    model: str, repeat: int, *, status: str = "completed", probability: float = 0.7
) -> dict[str, Any]:
    """One attempt as ``shadow run`` records it: a completed one searched once."""
    events = [{"type": "thread.started", "thread_id": f"{model}-{repeat}"}]
    if status == "completed":
        events.append({"type": "item.completed", "item": {"type": "web_search", "query": "年报"}})
    record: dict[str, Any] = {
        "model": model,
        "reasoning_effort": "low",
        "status": status,
        "executed_at": f"2026-02-10T02:0{repeat}:00+00:00",
        "latency_seconds": 1.0,
    }
    if status == "completed":
        record["web_search_calls"] = 1
        record["submission"] = {
            "event_probability": probability,
            "prediction": "event" if probability >= 0.5 else "no_event",
            "evidence_urls": ["https://www.sse.com.cn/example"],
            "analysis_summary": "证据支持增长，但不是因果证明。",
        }
    else:
        record["error"] = "timeout after 30s"
        record["web_search_calls"] = 0
    record |= {"events": events, "events_sha256": digest(events), "usage": {}}
    record["repeat_index"] = repeat
    return record


def agent_payload(source: dict[str, Any]) -> dict[str, Any]:
    """What the scenario shows an agent: no provenance, no outcome."""
    search = source["search_policy"]
    return {
        "scenario_id": source["id"],
        "suite": source["suite"],
        "mode": source["mode"],
        "security": source["security"],
        "as_of": source["as_of"],
        "prediction_window_end": source["prediction_window"]["end"],
        "target": {
            key: source["target"][key]
            for key in ("event", "definition", "criteria_mode", "criteria")
        },
        "prompt": source["prompt"],
        "search_tool": {
            "name": "live_web_search",
            "policy": search["mode"],
            "latest_published_at": search["latest_published_at"],
            "allowed_domains": search["allowed_domains"],
        },
        "response_contract": source["response_contract"],
    }


def seal(
    source: dict[str, Any],
    *,
    models: tuple[str, ...] = MODELS,
    repeats: int = 3,
    started_at: str = STARTED_AT,
    completed_at: str = COMPLETED_AT,
    failed: tuple[tuple[str, int], ...] = (),
) -> dict[str, Any]:
    """The seal ``shadow run`` writes of ``source``, models x repeats attempts."""
    shown = agent_payload(source)
    results = [
        attempt(m, r, status="failed" if (m, r) in failed else "completed")
        for m in models
        for r in range(1, repeats + 1)
    ]
    return committed(
        {
            "schema_version": 1,
            "artifact_type": "pitfall_live_shadow_seal",
            "sealed_at": completed_at,
            "scenario_source": source,
            "scenario_sha256": digest(source),
            "agent_payload": shown,
            "agent_payload_sha256": digest(shown),
            "harness": {
                "name": "codex-cli-native-live-web",
                "version": "codex test",
                "sandbox": "read-only",
                "web_search": "native Responses web_search",
                "session_persistence": False,
                "outcome_visible_to_agent": False,
            },
            "matrix": {"models": list(models), "reasoning_effort": "low", "repeats": repeats},
            "started_at": started_at,
            "completed_at": completed_at,
            "duration_seconds": 1800.0,
            "results": results,
            "timestamp_guardrail": SEAL_GUARDRAIL,
        }
    )


def seals(private: dict[str, Any]) -> list[dict[str, Any]]:
    return [seal(case["scenario_source"]) for case in private["cases"]]


def finalize(
    private: dict[str, Any], opaque: dict[str, Any], sealed: list[dict[str, Any]]
) -> dict[str, Any]:
    """The suite index ``suite finalize`` writes: one member per slot."""
    by_sha = {case["scenario_sha256"]: case for case in private["cases"]}
    members = []
    for one in sealed:
        case = by_sha[one["scenario_sha256"]]
        source = case["scenario_source"]
        members.append(
            {
                "slot_id": case["slot_id"],
                "family": case["family"],
                "scenario_id": source["id"],
                "scenario_sha256": one["scenario_sha256"],
                "seal_commitment_sha256": one["commitment"]["payload_sha256"],
                "as_of": source["as_of"],
                "window_end": source["prediction_window"]["end"],
                "attempt_count": len(one["results"]),
                "completed_count": sum(r["status"] == "completed" for r in one["results"]),
            }
        )
    return committed(
        {
            "schema_version": 1,
            "artifact_type": "pitfall_sealed_suite",
            "suite_id": private["suite_id"],
            "created_at": FINALIZED_AT,
            "plan_commitment_sha256": private["commitment"]["payload_sha256"],
            "public_plan_commitment_sha256": opaque["commitment"]["payload_sha256"],
            "policy": private["policy"],
            "members": sorted(members, key=lambda m: m["slot_id"]),
            "outcome_status": "unresolved",
            "resolution_guardrail": SUITE_GUARDRAIL,
        }
    )


def label(scenario_id: str, *, growth: float = 0.3, event: bool = True) -> dict[str, Any]:
    """A matured label, as its author writes it: revenue 100 -> 100 x (1 + growth)."""
    return {
        "schema_version": 1,
        "artifact_type": "pitfall_live_shadow_label",
        "scenario_id": scenario_id,
        "resolved_at": RESOLVED_AT,
        "event_occurred": event,
        "realized": {
            "observations": {"revenue_start": 100.0, "revenue_end": 100.0 * (1 + growth)},
            "derivations": [
                {
                    "metric": "revenue_growth",
                    "operation": "pct_change",
                    "inputs": ["revenue_start", "revenue_end"],
                    "value": growth,
                }
            ],
        },
        "outcome_sources": [
            {
                "title": "三季度报告",
                "published_at": RESOLVED_AT,
                "url": "https://www.sse.com.cn/outcome.pdf",
            }
        ],
    }


def _score(probability: float, prediction: str, event: bool) -> dict[str, Any]:
    observed = float(event)
    brier = (probability - observed) ** 2
    clipped = min(max(probability, 1e-15), 1 - 1e-15)
    log_loss = -(observed * math.log(clipped) + (1 - observed) * math.log(1 - clipped))
    return {
        "brier_score": round(100 * (1 - brier), 6),
        "brier_loss": round(brier, 8),
        "log_loss": round(log_loss, 8),
        "classification_correct": prediction == ("event" if event else "no_event"),
    }


def resolve(
    sealed: dict[str, Any], matured: dict[str, Any], created_at: str = RESOLVED_CREATED_AT
) -> dict[str, Any]:
    """The resolution ``shadow resolve`` writes of ``sealed`` under ``matured``."""
    observations = matured["realized"]["observations"]
    metrics = {name: float(value) for name, value in observations.items()}
    for item in matured["realized"]["derivations"]:
        metrics[item["metric"]] = float(item["value"])
    scored = []
    for run in sealed["results"]:
        item = {key: run[key] for key in ("model", "reasoning_effort", "repeat_index", "status")}
        if run["status"] == "completed":
            answer = run["submission"]
            item["submission"] = answer
            item["score"] = _score(
                answer["event_probability"], answer["prediction"], matured["event_occurred"]
            )
        scored.append(item)
    return committed(
        {
            "schema_version": 1,
            "artifact_type": "pitfall_live_shadow_resolution",
            "created_at": created_at,
            "seal_commitment_sha256": sealed["commitment"]["payload_sha256"],
            "scenario_id": sealed["scenario_source"]["id"],
            "resolved_at": matured["resolved_at"],
            "event_occurred": matured["event_occurred"],
            "realized_metrics": metrics,
            "label": matured,
            "results": scored,
        }
    )


def cohort() -> dict[str, Any]:
    """A whole cohort: plan, public commitment, six seals, the suite, and the first
    case's label and resolution."""
    private = plan()
    opaque = public(private)
    sealed = seals(private)
    matured = label(sealed[0]["scenario_source"]["id"])
    return {
        "plan": private,
        "public": opaque,
        "seals": sealed,
        "suite": finalize(private, opaque, sealed),
        "label": matured,
        "resolution": resolve(sealed[0], matured),
    }
