"""A PITFALL live-shadow scenario as the suite checks read it, and how its outcome is
judged: its dates and market, a submission's rules, the event a label's realized figures
give under the scenario's criteria, and a probability's score.

These follow PITFALL 0.17.0's ``walkforward.py`` and ``live_shadow.py`` rule for rule
where an artifact carries what the rule needs. A scenario's free text (prompt, target
definition, response contract, provenance) is bound by its digest and not read here.
Every refusal is a :class:`Rule`; the reader names the artifact.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlparse
from zoneinfo import ZoneInfo

from harness.points.pitfall_records import Rule, Score

SCENARIO_FIELDS = frozenset(
    {
        "schema_version",
        "id",
        "suite",
        "mode",
        "security",
        "as_of",
        "prediction_window",
        "target",
        "prompt",
        "search_policy",
        "response_contract",
        "authoring_provenance",
    }
)
# PITFALL dates a scenario in its market's calendar: China's exchanges, else UTC
SHANGHAI_EXCHANGES = frozenset({"SSE", "SZSE", "BSE"})
COMPARISONS = (">", ">=", "<", "<=", "==")
METRIC = re.compile(r"[a-z][a-z0-9_]*")
OPERATIONS = ("ratio", "margin", "difference", "pct_change", "cagr")
SUBMISSION_FIELDS = ("event_probability", "prediction", "evidence_urls", "analysis_summary")


@dataclass(frozen=True)
class Criterion:
    metric: str
    comparison: str
    value: float

    def holds(self, actual: float) -> bool:
        if self.comparison == "==":
            return math.isclose(actual, self.value, rel_tol=1e-9, abs_tol=1e-12)
        return {
            ">": actual > self.value,
            ">=": actual >= self.value,
            "<": actual < self.value,
            "<=": actual <= self.value,
        }[self.comparison]


@dataclass(frozen=True)
class Scenario:
    """What the checks need of a live-shadow scenario."""

    id: str
    schema_version: int
    exchange: str
    as_of: date
    window_end: date
    criteria_mode: str
    criteria: tuple[Criterion, ...]
    allowed_domains: tuple[str, ...]

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo("Asia/Shanghai" if self.exchange in SHANGHAI_EXCHANGES else "UTC")

    def market_date(self, moment: datetime) -> date:
        """The date ``moment`` falls on in the scenario's market."""
        return moment.astimezone(self.zone).date()


def text(value: Any, field: str) -> str:
    """A non-empty string, stripped (as PITFALL reads one)."""
    if not isinstance(value, str) or not value.strip():
        raise Rule(f"{field} must be a non-empty string")
    return value.strip()


def number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Rule(f"{field} must be a number")
    if not math.isfinite(float(value)):
        raise Rule(f"{field} must be finite")
    return float(value)


def day(value: Any, field: str) -> date:
    try:
        return date.fromisoformat(text(value, field))
    except ValueError:
        raise Rule(f"{field} must be a date, YYYY-MM-DD, not {value!r:.40}") from None


def moment(value: Any, field: str) -> datetime:
    """An ISO-8601 time with its offset (PITFALL refuses one without)."""
    if not isinstance(value, str):
        raise Rule(f"{field} must be an ISO datetime")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise Rule(f"{field} must be an ISO datetime, not {value!r:.40}") from None
    if parsed.tzinfo is None:
        raise Rule(f"{field} must include a timezone")
    return parsed


def mapping(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, dict) or not value:
        raise Rule(f"{field} must be a non-empty object")
    return value


def _criteria(target: Mapping[str, Any], schema_version: int) -> tuple[str, list[Criterion]]:
    if schema_version == 1:  # one impairment threshold
        threshold = number(target.get("threshold"), "target.threshold")
        if not 0 < threshold <= 1:
            raise Rule("target.threshold must be in (0, 1]")
        return "all", [Criterion("asset_impairment_ratio", ">", threshold)]
    mode = target.get("criteria_mode")
    if mode not in ("all", "any"):
        raise Rule("target.criteria_mode must be all or any")
    raw = target.get("criteria")
    if not isinstance(raw, list) or not raw:
        raise Rule("target.criteria must be a non-empty list")
    criteria = []
    for i, item in enumerate(raw):
        item = mapping(item, f"target.criteria[{i}]")
        metric = text(item.get("metric"), f"target.criteria[{i}].metric")
        if not METRIC.fullmatch(metric):
            raise Rule(f"target.criteria[{i}].metric must be lowercase snake_case")
        if item.get("comparison") not in COMPARISONS:
            raise Rule(f"target.criteria[{i}].comparison must be one of {', '.join(COMPARISONS)}")
        text(item.get("description"), f"target.criteria[{i}].description")
        value = number(item.get("value"), f"target.criteria[{i}].value")
        criteria.append(Criterion(metric, str(item["comparison"]), value))
    if len(set(criteria)) != len(criteria):
        raise Rule("target.criteria must be unique")
    return str(mode), criteria


def _check_texts(source: Mapping[str, Any]) -> None:
    """The scenario's text fields are there, as PITFALL requires: bound by its digest,
    never read here."""
    for field in ("suite", "prompt"):
        text(source[field], f"scenario {field}")
    security = mapping(source["security"], "security")
    for field in ("order_book_id", "ticker", "name_as_of", "exchange"):
        text(security.get(field), f"security.{field}")
    text(
        mapping(source["prediction_window"], "prediction_window").get("description"),
        "prediction_window.description",
    )
    target = mapping(source["target"], "target")
    for field in ("event", "definition"):
        text(target.get(field), f"target.{field}")
    properties = mapping(source["response_contract"], "response_contract").get("properties")
    if not isinstance(properties, dict) or not set(SUBMISSION_FIELDS) <= set(properties):
        raise Rule("response_contract is missing required properties")
    mapping(source["authoring_provenance"], "authoring_provenance")


def scenario_of(source: Any) -> Scenario:
    """A live-shadow scenario's fields, once they hold together as PITFALL requires."""
    source = mapping(source, "scenario")
    missing = sorted(SCENARIO_FIELDS - set(source))
    if missing:
        raise Rule(f"scenario missing: {', '.join(missing)}")
    if source["schema_version"] not in (1, 2) or isinstance(source["schema_version"], bool):
        raise Rule("scenario schema_version must be 1 or 2")
    if source["mode"] != "live_shadow":
        raise Rule(f"scenario mode must be live_shadow, not {source['mode']!r:.40}")
    _check_texts(source)
    as_of = day(source["as_of"], "scenario as_of")
    window_end = day(source["prediction_window"].get("end"), "scenario prediction_window.end")
    if window_end <= as_of:
        raise Rule("scenario prediction window must end after as_of")
    search = mapping(source["search_policy"], "search_policy")
    if search.get("mode") != "live_web":
        raise Rule("a live_shadow scenario's search_policy mode must be live_web")
    if day(search.get("latest_published_at"), "search_policy.latest_published_at") > as_of:
        raise Rule("scenario search cutoff is after as_of")
    domains = search.get("allowed_domains")
    if not isinstance(domains, list) or not domains:
        raise Rule("search_policy.allowed_domains must be a non-empty list")
    allowed = tuple(text(d, "allowed_domains item") for d in domains)
    if len(set(allowed)) != len(allowed):
        raise Rule("search_policy.allowed_domains must be unique")
    mode, criteria = _criteria(source["target"], source["schema_version"])
    return Scenario(
        id=text(source["id"], "scenario id"),
        schema_version=source["schema_version"],
        exchange=text(source["security"]["exchange"], "security.exchange"),
        as_of=as_of,
        window_end=window_end,
        criteria_mode=mode,
        criteria=tuple(criteria),
        allowed_domains=allowed,
    )


def probability_of(submission: Any) -> float:
    """A completed attempt's probability, once its answer holds every field PITFALL
    requires, a probability in [0, 1] and the binary call the 0.5 threshold gives."""
    answer = mapping(submission, "submission")
    missing = [key for key in SUBMISSION_FIELDS if key not in answer]
    if missing:
        raise Rule(f"submission missing: {', '.join(missing)}")
    probability = number(answer["event_probability"], "event_probability")
    if not 0 <= probability <= 1:
        raise Rule("event_probability must be between 0 and 1")
    if answer["prediction"] != ("event" if probability >= 0.5 else "no_event"):
        raise Rule("prediction must agree with the 0.5 probability threshold")
    return probability


def check_sources(submission: Mapping[str, Any], scenario: Scenario) -> None:
    """The answer's sources are HTTP(S) URLs on the scenario's allowed domains, and its
    summary is not empty."""
    urls = submission["evidence_urls"]
    if not isinstance(urls, list) or not urls:
        raise Rule("evidence_urls must be a non-empty list")
    for url in urls:
        parts = urlparse(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https"):
            raise Rule("evidence_urls must hold HTTP(S) URLs")
        host = (parts.hostname or "").lower()
        if not any(host == d or host.endswith(f".{d}") for d in scenario.allowed_domains):
            raise Rule(f"evidence URL domain {host!r} is not allowlisted")
    text(submission["analysis_summary"], "analysis_summary")


def score(probability: float, prediction: Any, event_occurred: bool) -> Score:
    """PITFALL's score of one probability against the outcome, rounded as it rounds."""
    observed = float(event_occurred)
    brier = (probability - observed) ** 2
    clipped = min(max(probability, 1e-15), 1 - 1e-15)
    log_loss = -(observed * math.log(clipped) + (1 - observed) * math.log(1 - clipped))
    return Score(
        brier_score=round(100 * (1 - brier), 6),
        brier_loss=round(brier, 8),
        log_loss=round(log_loss, 8),
        classification_correct=prediction == ("event" if event_occurred else "no_event"),
    )


def _legacy_metrics(realized: Mapping[str, Any]) -> dict[str, float]:
    loss = number(realized.get("asset_impairment_loss"), "realized.asset_impairment_loss")
    equity = number(realized.get("pre_as_of_equity"), "realized.pre_as_of_equity")
    ratio = number(realized.get("ratio"), "realized.ratio")
    if loss < 0 or ratio < 0 or equity <= 0:
        raise Rule("realized loss and ratio must be non-negative, equity positive")
    if not math.isclose(ratio, loss / equity, rel_tol=1e-8, abs_tol=1e-10):
        raise Rule("realized ratio does not equal loss / equity")
    return {
        "asset_impairment_loss": loss,
        "pre_as_of_equity": equity,
        "asset_impairment_ratio": ratio,
    }


def _two(inputs: list[float], operation: str) -> tuple[float, float]:
    if len(inputs) != 2:
        raise Rule(f"{operation} requires exactly 2 inputs")
    return inputs[0], inputs[1]


def _derived(operation: str, inputs: list[float], item: Mapping[str, Any]) -> float:
    """One derivation's value as PITFALL computes it."""
    if operation not in OPERATIONS:
        raise Rule(f"unsupported operation {operation!r:.40}")
    first, second = _two(inputs, operation)
    if {"ratio": second, "margin": first, "pct_change": first}.get(operation) == 0:
        raise Rule(f"{operation} divides by zero")
    if operation == "ratio":
        return first / second
    if operation == "margin":
        return (first - second) / first
    if operation == "difference":
        return first - second
    if operation == "pct_change":
        return second / first - 1
    periods = number(item.get("periods"), "cagr periods")
    if periods <= 0 or first <= 0 or second < 0:
        raise Rule("cagr needs positive periods, a positive start and an end of 0 or more")
    return float((second / first) ** (1 / periods) - 1)


def _generic_metrics(realized: Mapping[str, Any]) -> dict[str, float]:
    observations = mapping(realized.get("observations"), "realized.observations")
    metrics = {}
    for name, value in observations.items():
        if not METRIC.fullmatch(name):
            raise Rule(f"realized observation {name!r:.40} must be lowercase snake_case")
        metrics[name] = number(value, f"realized.observations.{name}")
    derivations = realized.get("derivations")
    if not isinstance(derivations, list):
        raise Rule("realized.derivations must be a list")
    for i, raw in enumerate(derivations):
        item = mapping(raw, f"realized.derivations[{i}]")
        metric = text(item.get("metric"), f"realized.derivations[{i}].metric")
        if not METRIC.fullmatch(metric) or metric in metrics:
            raise Rule(f"realized.derivations[{i}]: metric {metric!r:.40} is new snake_case")
        inputs = item.get("inputs")
        if not isinstance(inputs, list) or any(name not in metrics for name in inputs):
            raise Rule(f"realized.derivations[{i}]: inputs must name earlier metrics")
        operation = text(item.get("operation"), f"realized.derivations[{i}].operation")
        stated = number(item.get("value"), f"realized.derivations[{i}].value")
        calculated = _derived(operation, [metrics[n] for n in inputs], item)
        if not math.isclose(stated, calculated, rel_tol=1e-8, abs_tol=1e-10):
            raise Rule(f"realized.derivations[{i}]: value does not match {operation}")
        metrics[metric] = stated
    return metrics


def realized_metrics(scenario: Scenario, realized: Any, event_occurred: bool) -> dict[str, float]:
    """The label's realized figures, each derivation recomputed, once the event they give
    under the scenario's criteria is the label's ``event_occurred``."""
    realized = mapping(realized, "realized")
    if scenario.schema_version == 1:
        metrics = _legacy_metrics(realized)
    else:
        metrics = _generic_metrics(realized)
    missing = [c.metric for c in scenario.criteria if c.metric not in metrics]
    if missing:
        raise Rule(f"realized metrics are missing {', '.join(missing)}")
    met = [c.holds(metrics[c.metric]) for c in scenario.criteria]
    if event_occurred != (all(met) if scenario.criteria_mode == "all" else any(met)):
        raise Rule(
            "event_occurred disagrees with what the realized figures give under the "
            "scenario's criteria"
        )
    return metrics


def latest_date_anywhere(now: datetime) -> date:
    """The date a calendar at UTC+14 shows at ``now``, the latest on Earth: a date after
    it has not begun in any market."""
    return (now.astimezone(UTC) + timedelta(hours=14)).date()
