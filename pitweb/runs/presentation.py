"""A run in words, for its page, the API and the board: its verification level, the
verdicts on its numbers, its isolation, its platform figures' standing. Display only:
the queries are in ``selectors``."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from msgspec import UNSET

from harness.receipt.memory import MemoryVerdict, memory_verdict
from harness.receipt.model import (
    CostsSlot,
    DisaggregationSlot,
    ModelVersionSlot,
    ProvenanceSlot,
    ReceiptBody,
    RetrievalSlot,
    Slot,
    TrainingCutoffSlot,
)
from harness.receipt.placebo import SIDES, placebo_reading
from harness.receipt.ratecard import RateCard as ParsedCard
from harness.receipt.ratecard import dollars, parse_rate_card, price_usage
from harness.vocabulary import CLOCKS
from pitweb.pricing.models import PlatformScore, RateCard
from pitweb.runs.models import JobState, Run, VerificationLevel

LEVEL_WORDS = {
    VerificationLevel.SELF_REPORTED: "self-reported: stored as uploaded, not checked",
    VerificationLevel.HASHES_VERIFIED: "hashes verified: the arithmetic was re-derived from "
    "the trajectory; the agent was not re-run",
    VerificationLevel.REEXECUTED: "re-executed: the agent was run again on the same frozen "
    "data and repeated every score-bearing decision",
}
LEVEL_SHORT = {
    VerificationLevel.SELF_REPORTED: "not checked",
    VerificationLevel.HASHES_VERIFIED: "arithmetic re-derived; agent not re-run",
    VerificationLevel.REEXECUTED: "agent re-run; decisions repeated",
}
DECLARED = "declared by the submitter's harness (not verifiable)"


REFUTED_WORDS = (
    "refuted: the system re-derived the receipt from its trajectory and release, and it "
    "does not hold"
)


def level_words(run: Run) -> str:
    """The run's verification level in words; a refuted receipt was checked, so it is
    never called "not checked"."""
    if run.status == JobState.MISMATCH:
        return REFUTED_WORDS
    return LEVEL_WORDS.get(run.verification_level, run.verification_level)  # type: ignore[call-overload,no-any-return]


MASK_WORDS = {
    "mask_leaks": "mask leaks: the probe recovered real dates or issuers from shifted rows, so "
    "the shifted arm is no control and its delta no measure of memory",
    "mask_holds": "mask holds: no probe answer gave a real date or issuer away",
    "inconclusive": "mask probe inconclusive: no verdict on the mask",
    "no_items": "mask probe no items: no verdict on the mask",
}
NOT_RUN_WORDS = "mask probe not run: no verdict on the mask"

# the memory verdict (harness.receipt.memory): a run's words add its own figures
MEMORY_WORDS: dict[str, str] = {
    "score_from_memory": "score from memory: while the mask held, the main arm beat the "
    "shifted arm at the pit clock by more than chance explains (the 95% interval of main "
    "minus shifted lies above zero): the edge went away when the dates were moved",
    "no_sign_of_memory": "no sign of memory: main minus shifted at the pit clock is within "
    "what chance explains, or below zero",
    "control_void": "memory not measured: the mask leaks, so the shifted arm is no control",
    "not_measured": "memory not measured: no interval for main minus shifted at the pit "
    "clock, or no verdict on the mask",
}

# a run's state (its latest verification job's), and a job's
STATE_WORDS = {
    JobState.RECEIVED: "received: stored, waiting for a worker to verify it",
    JobState.VERIFYING: "verifying: a worker is re-deriving it now",
    JobState.VERIFIED: "verified: every hash and score re-derived and equal",
    JobState.MISMATCH: "mismatch: refuted, a hash or a score differs from what was re-derived",
    JobState.HARNESS_ERROR: "harness error: the verifier itself failed (retried; never the "
    "submitter's fault)",
    JobState.UNKNOWN_RELEASE: "unknown release: the site holds no release with the digest "
    "the receipt binds",
}
JOB_KIND_WORDS = {
    "verify": "verification of an upload",
    "reverify": "re-verification asked for by staff",
}
VISIBILITY_WORDS = {
    "public": "public: on the board and its pages",
    "private": "private: seen by its submitter and staff only",
}


def header_verdicts(run: Run) -> list[tuple[str, str]]:
    """Every verdict that qualifies the run's numbers, as (kind, words), for the top of
    its page: the mask, the cells that did not complete, a score from memory, and the
    level (good, bad or warn, for the badge's colour)."""
    verdict = run.mask_verdict
    mask = MASK_WORDS.get(
        verdict, f"mask probe {verdict.replace('_', ' ')}: no verdict on the mask"
    )
    kinds = {"mask_holds": "good", "mask_leaks": "bad"}
    if run.proven:
        out = [(kinds.get(verdict, "warn"), mask)]
    else:  # the receipt's word until the system has re-derived it
        out = [("warn", f"{verdict.replace('_', ' ')} by the receipt's own word, not proven")]
    broken = [f"{c.arm}/{c.clock} {c.status}" for c in run.receipt.cells if c.status != "complete"]
    if broken:
        out.append(
            (
                "bad",
                f"{len(broken)} of {len(run.receipt.cells)} cells did not complete: "
                + ", ".join(broken),
            )
        )
    memory = run_memory(run) if run.proven else None
    if memory is not None and memory[0] == "score_from_memory":
        out.append(("bad", memory[1]))
    if run.withdrawn_at is not None:
        out.append(("bad", f"withdrawn by its submitter on {run.withdrawn_at:%Y-%m-%d}"))
    attempts = run_attempts(run)
    if attempts > 1:
        out.append(("warn", f"one of {attempts} attempts of its family: {ATTEMPTS_WORDS}"))
    if run.status == JobState.MISMATCH:
        out.append(("bad", "refuted"))
    elif not run.proven:
        out.append(
            (
                "warn",
                f"{run.status.replace('_', ' ')}: not proven, no figure of it is shown as a result",
            )
        )
    else:
        out.append(("good", LEVEL_SHORT.get(run.verification_level, "")))  # type: ignore[call-overload]
    return out


ATTEMPTS_WORDS = "a best of many is ranked on its family-wise (Šidák) interval"


def run_attempts(run: Run) -> int:
    """How many uploads the run's family counts (1 for a run stored around intake)."""
    return run.family.attempts if run.family is not None else 1


def shifted_delta_reading(interval: list[float] | None) -> str:
    """What the pit clock's main minus shifted interval supports, in words."""
    if interval is None:
        return (
            "This run's figures carry no interval for the delta (priced before intervals "
            "were drawn, or a control cell without a priced trade): read its size with care."
        )
    low, high = interval
    if low > 0:
        return (
            "At the pit clock its interval lies above zero: the agent did better on the real "
            "dates than on the shifted ones, by more than chance explains."
        )
    if high < 0:
        return (
            "At the pit clock its interval lies below zero: the agent did better on the "
            "shifted dates; such a delta measures no memory (the seed's lesson: masked "
            "deltas mix memory, lost information and distraction)."
        )
    return (
        "At the pit clock its interval spans zero: these trades cannot tell a memory of the "
        "period from none."
    )


def placebo_rows(split: dict[str, Any]) -> list[dict[str, Any]]:
    """The placebo split's table: per clock and side, main minus shifted, its interval,
    the trades it rests on; the clock's reading (``placebo_reading``: only what the two
    intervals support) on the clock's first row."""
    rows = []
    for clock in [c for c in CLOCKS if c in (split.get("clocks") or {})]:
        for side in SIDES:
            part = split["clocks"][clock][side]
            rows.append(
                {
                    "clock": clock,
                    "side": side,
                    "delta": part.get("main_minus_shifted"),
                    "interval": part.get("main_minus_shifted_interval_95"),
                    "main_trades": part.get("main_trades"),
                    "shifted_trades": part.get("shifted_trades"),
                    "sessions": part.get("sessions"),
                    "reading": placebo_reading(split, clock) if side == "before" else "",
                }
            )
    return rows


def _pp(value: float) -> str:
    return f"{value * 100:+.2f}"


def run_memory(run: Run) -> tuple[MemoryVerdict, str] | None:
    """The memory verdict on a proven run's platform figures, and its words with the
    figures it read; None without scored platform figures."""
    score = run.platform
    if score is None or score.state != PlatformScore.State.SCORED:
        return None
    low, high = score.delta_shifted_pit_low, score.delta_shifted_pit_high
    interval = None if low is None or high is None else (low, high)
    verdict = memory_verdict(interval, run.mask_verdict)
    if interval is None or verdict not in ("score_from_memory", "no_sign_of_memory"):
        return verdict, MEMORY_WORDS[verdict]
    delta = _pp(score.delta_shifted_pit or 0.0)
    reading = f"(95% interval {_pp(interval[0])} to {_pp(interval[1])} pp)"
    if verdict == "score_from_memory":
        return verdict, (
            f"score from memory: main beat shifted by {delta} pp at the pit clock {reading} "
            "while the mask held"
        )
    return verdict, f"no sign of memory: main minus shifted {delta} pp at the pit clock {reading}"


def isolation_words(run: Run) -> str:
    """Whose word the run's isolation is: measured by our workers for a run the site
    executed; the submitter's for an upload, re-executed or not."""
    declared = f"{'isolated' if run.agent_isolated else 'not isolated'}: {DECLARED}"
    if run.executed:
        isolated = "isolated" if run.agent_isolated else "not isolated"
        return f"executed by the site, {isolated}: measured by its workers"
    if run.verification_level == VerificationLevel.REEXECUTED:
        return f"re-executed by the site; {declared}"
    return declared


# where the run's window lies against its model's declared training cutoff (P2's check)
CUTOFF_WORDS = {
    "post_cutoff": "post-cutoff: the window lies after the declared training cutoff",
    "crossing": "crossing: the window crosses the declared training cutoff (after it the "
    "contamination delta should vanish)",
    "pre_cutoff": "pre-cutoff: inside the training data: the window ends on or before the "
    "declared training cutoff, so its score is no evidence of forecasting",
}
NO_CUTOFF_WORDS = "no training cutoff declared: where the window lies against it is not known"
FORWARD_TESTED_WORDS = (
    "forward-tested: this run is a forward run of a commitment on the public log: the site "
    "executed the committed agent package (the same digest) over sessions after the "
    "commitment, verified it, and found every traded filing accepted after it"
)


def cutoff_words(run: Run) -> str:
    """Where the run's window lies against its declared training cutoff, in words."""
    return CUTOFF_WORDS.get(run.cutoff_relation, NO_CUTOFF_WORDS)


def could_read_future(run: Run) -> bool:
    """By its own receipt, nothing kept the agent from the release and prices on disk:
    it ran in the harness's process (or unconfined), and the site did not re-run it."""
    return not run.agent_isolated and run.verification_level != VerificationLevel.REEXECUTED


def platform_status(run: Run) -> str:
    """Where the run's platform figures stand, in words (never a stated value)."""
    score = run.platform
    if score is None:
        return "awaiting reference prices for this release"
    version = f"prices v{score.prices.version}"
    if score.state in (PlatformScore.State.PENDING, PlatformScore.State.SCORING):
        return f"pending ({version})"
    if score.state == PlatformScore.State.REFUSED:
        return f"no figure ({version}): {score.message}"
    if score.state == PlatformScore.State.HARNESS_ERROR:
        return f"no figure ({version}): the scorer failed (ours, not the run's)"
    if score.shifted_pit is None:
        return f"no priced trade in shifted/pit ({version})"
    if score.shifted_pit_tails is None:
        return f"scored before attempts were counted: being scored again ({version})"
    if (score.shifted_pit_priced or 0) < settings.PITWEB_MIN_RANKED_TRADES:
        return (
            f"{score.shifted_pit_priced} priced trades in shifted/pit, fewer than the "
            f"{settings.PITWEB_MIN_RANKED_TRADES} a ranked run needs ({version})"
        )
    return "scored"


def platform_numbers(run: Run) -> dict[str, Any]:
    score = run.platform
    out: dict[str, Any] = {"platform_status": platform_status(run)}
    if score is None:
        return out
    out.update(
        {
            "prices_version": score.prices.version,
            "prices_source": score.prices.source,
            "prices_pulled_at": score.prices.pulled_at,
            "prices_sha256": score.prices.file_sha256,
            "prices_basis": score.prices.basis,
        }
    )
    if score.state == PlatformScore.State.SCORED:
        out.update(
            {
                "platform_shifted_pit": score.shifted_pit,
                "platform_shifted_pit_low": score.shifted_pit_low,
                "platform_shifted_pit_high": score.shifted_pit_high,
                "platform_shifted_pit_priced": score.shifted_pit_priced,
                "platform_main_pit": score.main_pit,
                "platform_main_pit_low": score.main_pit_low,
                "platform_main_pit_high": score.main_pit_high,
                "platform_delta_shifted_pit": score.delta_shifted_pit,
                "platform_delta_shifted_pit_low": score.delta_shifted_pit_low,
                "platform_delta_shifted_pit_high": score.delta_shifted_pit_high,
                "platform_delta_redacted_pit": score.delta_redacted_pit,
                "platform_delta_redacted_pit_low": score.delta_redacted_pit_low,
                "platform_delta_redacted_pit_high": score.delta_redacted_pit_high,
                # the ranked cell net of the site's stated cost level, and against the
                # prices version's market index (None: the score has none)
                "platform_cost_bps": score.cost_bps,
                "platform_shifted_pit_after_costs": score.shifted_pit_after_costs,
                "index_symbol": score.prices.index_symbol or None,
                "platform_shifted_pit_excess": score.shifted_pit_excess,
                "platform_shifted_pit_beta": score.shifted_pit_beta,
            }
        )
        memory = run_memory(run)
        if memory is not None:
            out["memory_verdict"], out["memory_words"] = memory
    return out


_PARSED: dict[str, ParsedCard] = {}


def _card(card: RateCard) -> ParsedCard:
    """A registered card parsed once per process: its sha256 names its content."""
    parsed = _PARSED.get(card.sha256)
    if parsed is None:
        if len(_PARSED) >= 8:  # a few versions at most are read at once
            _PARSED.clear()
        parsed = _PARSED[card.sha256] = parse_rate_card(card.content.encode())
    return parsed


def model_cost(run: Run) -> dict[str, Any]:
    """A proven run's model usage as measured at the run's model proxy (re-derived by its
    verification) priced with the site's newest rate card: its tokens, its cost (a floor,
    said so, when an exchange's usage was unknown or a model is not on the card), the
    ranked figure per dollar spent, and the agent's own cost report beside them, labelled
    self-reported. Empty for a run that measured none, or whose numbers are not proven."""
    usage = run.summary.get("model_usage")
    if not usage or not run.proven:
        return {}
    out: dict[str, Any] = {
        "model_exchanges": usage["exchanges"],
        "model_unknown_exchanges": usage["unknown_exchanges"],
        "model_input_tokens": usage["input_tokens"],
        "model_output_tokens": usage["output_tokens"],
        "model_cached_input_tokens": usage["cached_input_tokens"],
        "model_reasoning_tokens": usage["reasoning_tokens"],
        "model_tokens": usage["input_tokens"] + usage["output_tokens"],
        "self_reported_cost_usd": None
        if not usage.get("self_reported")
        else dollars(usage["self_reported"]["cost_nanodollars"]),
    }
    card = RateCard.objects.order_by("-version").first()
    if card is None:
        return {**out, "rate_card_version": None}
    priced = price_usage(usage, _card(card))
    ranked = run.platform.shifted_pit if run.platform is not None else None
    return {
        **out,
        "rate_card_version": card.version,
        "model_cost_nanodollars": priced.nanodollars,
        "model_cost_usd": dollars(priced.nanodollars),
        # a floor: exchanges of unknown usage or models the card does not price
        "model_cost_whole": priced.whole,
        "unpriced_models": sorted(priced.unpriced),
        "return_per_dollar": None
        if ranked is None or not priced.nanodollars or not priced.whole
        else ranked / (priced.nanodollars / 1e9),
    }


P_SLOT_LABELS = {
    "P1_model_version": "P1 model version",
    "P2_training_cutoffs": "P2 training cutoff",
    "P3_retrieval_timestamps": "P3 retrieval timestamps",
    "P4_costs_and_frictions": "P4 costs and frictions",
    "P5_window_provenance": "P5 window provenance",
    "P6_disaggregation": "P6 disaggregation",
}


def _p_summary(slot: Slot) -> str:
    """One line of what a reporting slot holds."""
    if slot.status == "gap":
        return "not declared: a listed gap, never a guess"
    match slot:
        case ModelVersionSlot():
            return str(slot.declared)
        case TrainingCutoffSlot():
            return f"{slot.declared}: {_said(slot.check)} ({_said(slot.meaning)})"
        case RetrievalSlot():
            return (
                f"{slot.tool_calls} tool calls, {slot.rows_served} rows served; "
                f"{slot.acceptance_stamped_rows} of {slot.rows_in_window} rows carry an "
                f"acceptance stamp, {slot.pit_fallback_rows} fall back to published_at. "
                f"{slot.rule}"
            )
        case CostsSlot():
            prices = slot.prices
            stated = (
                f"prices declared as {prices.source!r}, pulled {prices.pulled_at} "
                f"({prices.basis} basis, not verified by the harness)"
                if prices
                else "no prices: the receipt's returns are n/a"
            )
            return (
                f"{slot.entry}, held {slot.hold_sessions} sessions; costs "
                f"{slot.costs}, slippage {slot.slippage}, shorts "
                f"{'yes' if slot.shorts else 'no'}; {stated}"
            )
        case ProvenanceSlot():
            return (
                f"release {slot.release} ({slot.source_kind or 'unknown source'}), "
                f"{slot.sessions} sessions {slot.first_session}..{slot.last_session}, "
                f"forms {', '.join(slot.forms)}"
            )
        case DisaggregationSlot():
            return f"scores per form: {', '.join(sorted(slot.by_form)) or 'none'}"
    return ""


def _said(value: object) -> str:
    """A field the body may leave out, as the page has always printed it."""
    return "None" if value is UNSET else str(value)


def checklist(receipt: ReceiptBody) -> list[dict[str, str]]:
    return [
        {
            "slot": P_SLOT_LABELS[key],
            "kind": slot.kind.replace("_", " "),
            "status": slot.status,
            "what": _p_summary(slot),
        }
        for key, slot in receipt.protocol.slots().items()
    ]


# A closed value (a state, a verdict, an error class) as the pages say it: words, never
# snake_case. What the plain rule (underscores as spaces) would say wrong is listed.
WORDS = {
    "self_reported": "self-reported",
    "reexecuted": "re-executed",
    "reexecute": "re-execution",
    "execute": "execution",
    "reexecution_failed": "re-execution failed",
    "not_yet_knowable": "not yet knowable",
    "judge_unreliable": "judge unreliable",
    "HARNESS_ERROR": "harness error",
    "non_numeric_factual_error": "non-numeric factual error",
    "post_cutoff": "post-cutoff",
    "pre_cutoff": "pre-cutoff",
}


AUDIT_HIDES = {
    "dates": "the real dates (every date shown ten years on)",
    "issuer": "the issuer (its name, CIK and ticker removed)",
}


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _audit_findings(date_hits: int, issuer_hits: int) -> str:
    found = [
        _count(n, what, whats)
        for n, what, whats in (
            (date_hits, "real date named", "real dates named"),
            (issuer_hits, "issuer named", "issuers named"),
        )
        if n
    ]
    return " and ".join(found) if found else "none"


def audit_rows(audit: dict[str, Any]) -> list[dict[str, str]]:
    """The reasoning audit's control cells in words, for the run page's table."""
    rows = []
    for cell in audit["cells"]:
        probe = cell["clock"] == "probe"
        rows.append(
            {
                "cell": f"{cell['arm']} mask probe" if probe else f"{cell['arm']}/{cell['clock']}",
                "hides": AUDIT_HIDES.get(cell["hides"], cell["hides"]),
                "texts": _count(cell["texts"], "text scanned", "texts scanned"),
                "rows": _count(cell["rows_served"], "row", "rows"),
                "findings": _audit_findings(cell["date_hits"], cell["issuer_hits"]),
                "unscanned": _count(
                    cell["unscanned_responses"], "model response", "model responses"
                )
                + " kept as base64, not scanned"
                if cell["unscanned_responses"]
                else "",
                "flagged": "bad" if cell["date_hits"] or cell["issuer_hits"] else "",
            }
        )
    return rows


def audit_summary(audit: dict[str, Any]) -> str:
    """The reasoning audit in one sentence."""
    texts = _count(audit["texts"], "text", "texts")
    if not audit["texts"]:
        return "The agent wrote no text on the control arms: there was nothing to scan."
    if not audit["date_hits"] and not audit["issuer_hits"]:
        return (
            f"Of the {texts} the agent wrote on the control arms, none named a real date or an "
            "issuer its arm hid from it."
        )
    return (
        f"Of the {texts} the agent wrote on the control arms, some named what their arm hid "
        f"from it: {_audit_findings(audit['date_hits'], audit['issuer_hits'])}, each quoted "
        "in the audit's file."
    )


def words(value: object) -> str:
    """A closed value in words: ``numeric_factual_error`` -> "numeric factual error"."""
    text = "" if value is None or value is UNSET else str(value)
    return WORDS.get(text, text.replace("_", " "))


_MODULE_PATH = re.compile(r"[A-Za-z_][\w.]*[.:]([A-Za-z_]\w*)")


def agent_name(agent: str) -> str:
    """An agent by its name, not its module path: ``pkg.module:earliest_five`` ->
    "earliest five"; anything else (``stub``, ``my-agent``, a command) as it is."""
    path = _MODULE_PATH.fullmatch(agent)
    return words(path.group(1)) if path else agent


# what each fault plan mode shows the agent, in words
FAULT_MODES = {
    "projection_lag": "positions shown a step late after a trade (read_your_writes)",
    "amount_sign": "held positions shown with the opposite sign (position_sign_convention)",
    "rate_limit": "a decision with orders refused by showing the same task again "
    "(submission_acceptance)",
}


def fault_rows(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A run's fault plan, fault by fault: what it shows, its bound, the cells it was
    assigned to and fired in, and the agent's graded responses counted by grade (all
    rank-neutral: nothing here enters a figure or a rank)."""
    report = body.get("fault_injection")
    plan = (body.get("config") or {}).get("fault_plan")
    if not report or not plan:
        return []
    grades: dict[str, dict[str, int]] = {}
    notes: dict[str, dict[str, int]] = {}  # what a fault's events say beside the grades
    for cell in report["evidence"]:
        for event in cell["events"]:
            fault_id, kind = event["fault_id"], event.get("fault_event")
            counted = grades.setdefault(fault_id, {})
            for response in event.get("responses") or []:
                counted[response["grade"]] = counted.get(response["grade"], 0) + 1
            said = notes.setdefault(fault_id, {})
            if kind == "rate_limited":
                said["refused"] = said.get("refused", 0) + event["rejected_presentations"]
                said["limited"] = said.get("limited", 0) + 1
                said["restated"] = said.get("restated", 0) + bool(
                    event["resubmitted_after_deadline"]
                )
            elif kind in ("projection_converged", "projection_unconverged"):
                said[kind] = said.get(kind, 0) + 1
    denominators = {d["fault_id"]: d for d in report["denominators"]}
    rows = []
    for fault in plan["faults"]:
        mode = fault["fault"]["mode"]
        bound = next(v for k, v in fault["fault"].items() if k != "mode")
        counted = grades.get(fault["id"], {})
        said = notes.get(fault["id"], {})
        parts = [
            ", ".join(f"{n} {grade.replace('_', ' ')}" for grade, n in sorted(counted.items()))
        ] if counted else []  # fmt: skip
        if "projection_converged" in said or "projection_unconverged" in said:
            parts.append(
                f"converged in {said.get('projection_converged', 0)} cell(s), not by the "
                f"window's end in {said.get('projection_unconverged', 0)}"
            )
        if said.get("limited"):
            parts.append(
                f"{said['refused']} presentation(s) refused in {said['limited']} cell(s); "
                f"it resubmitted after the limit in {said['restated']}"
            )
        responses = "; ".join(parts)
        d = denominators.get(fault["id"], {})
        rows.append(
            {
                "id": fault["id"],
                "shows": FAULT_MODES.get(mode, mode),
                "bound": bound,
                "cells": d.get("cells", 0),
                "assigned": d.get("assigned", 0),
                "fired": d.get("fired", 0),
                "responses": responses or "none graded",
            }
        )
    return rows
