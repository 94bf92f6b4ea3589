"""The gate: a run's receipt judged against a committed baseline's, rule by rule, so that
leakage fails a build the day it appears.

Each rule is named and says its numbers. First ``comparable``: the two runs must have
read the same release (its content digest) over the same shape (forms, window, arms,
clocks, hold; and, when returns are compared, the same price file). Runs of another
shape measure something else, so the comparison is void and no other rule is judged.
Then, each only where it applies:

- ``valid``: the run is valid and not aborted, and so is the baseline.
- ``contamination`` (with a limit): per clock and control arm, main minus the control
  above the limit fails; its 95% interval is said when the caller could draw one (the
  paired block bootstrap, ``Rescore.delta_intervals``), and "no interval" otherwise. A
  delta of null (an arm with no priced trade) has nothing to judge, and says so.
- ``mask``: with ``require_mask_holds`` the probe must have run and held; without it only
  a regression fails (the baseline's mask held, the run's leaks).
- ``protocol_gaps``: a protocol slot open in the run that the baseline closed.
- ``return_drop`` (with a tolerance): per clock, the main arm's total_return below the
  baseline's by more than the tolerance (absolute, in return units: 0.01 is one point).
- ``reasoning_audit`` (with an audit artifact, ``harness.receipt.audit``): its date and
  issuer hits above a limit.

Pure: two typed bodies (already checked against their hashes by the caller) and what
the caller computed from the run's files in, a ``GateResult`` out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from harness.receipt.model import ReceiptBody
from harness.vocabulary import CLOCKS

RuleName = Literal[
    "comparable",
    "valid",
    "contamination",
    "mask",
    "protocol_gaps",
    "return_drop",
    "reasoning_audit",
]
CONTROLS = ("shifted", "redacted")
NO_INTERVAL = "no interval"


class Rule(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One rule's judgment. ``subject``: what it judged when a rule is judged more than
    once (``pit main_minus_shifted``, a clock); ``value`` the run's figure, ``baseline``
    the baseline's, ``limit`` the one it was held to, ``interval`` the run's 95% interval
    where one was drawn; ``items``: what differs, opened or was hit."""

    name: RuleName
    ok: bool
    message: str
    subject: str | None = None
    value: float | None = None
    baseline: float | None = None
    limit: float | None = None
    interval: list[float] | None = None
    items: list[str] = msgspec.field(default_factory=list)


class GateResult(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``passed``: every rule held. ``void``: the runs are not comparable, so only that
    rule was judged (and ``passed`` is false)."""

    passed: bool
    void: bool
    rules: list[Rule]

    @property
    def failed(self) -> list[Rule]:
        return [r for r in self.rules if not r.ok]

    def to_json(self) -> dict[str, Any]:
        plain: dict[str, Any] = msgspec.to_builtins(self)
        return plain


# Per clock, per ``main_minus_<arm>``: the run's 95% interval, or None (as
# ``Rescore.delta_intervals`` gives them).
Intervals = Mapping[str, Mapping[str, Sequence[float] | None]]


def gate(
    receipt_body: ReceiptBody,
    baseline_body: ReceiptBody,
    *,
    max_contamination: float | None = None,
    require_mask_holds: bool = False,
    max_return_drop: float | None = None,
    intervals: Intervals | None = None,
    no_interval_because: str | None = None,
    audit: Mapping[str, Any] | None = None,
    max_audit_hits: int = 0,
) -> GateResult:
    """The run (``receipt_body``) judged against ``baseline_body``. ``intervals``: the
    run's contamination intervals where the caller could draw them (else each delta says
    "no interval", and ``no_interval_because`` why); ``audit``: the run's reasoning
    audit artifact, when the caller had its trajectory and release."""
    run, base = receipt_body, baseline_body
    comparable = _comparable(run, base, prices=max_return_drop is not None)
    if not comparable.ok:
        return GateResult(passed=False, void=True, rules=[comparable])
    rules = [comparable, _valid(run, base)]
    if max_contamination is not None:
        rules += _contamination(run, max_contamination, intervals, no_interval_because)
    rules.append(_mask(run, base, require=require_mask_holds))
    rules.append(_gaps(run, base))
    if max_return_drop is not None:
        rules += _return_drop(run, base, max_return_drop)
    if audit is not None:
        rules.append(_audit(audit, max_audit_hits))
    return GateResult(passed=all(r.ok for r in rules), void=False, rules=rules)


# -- the words numbers are said in ---------------------------------------------------------


def _pct(value: float | None) -> str:
    return "null" if value is None else f"{value * 100:+.2f}%"


def _pp(value: float) -> str:
    return f"{value * 100:+.2f} pp"


def _points(value: float) -> str:
    return f"{value * 100:.2f} pp"


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


# -- the rules -----------------------------------------------------------------------------


def _shape(body: ReceiptBody, *, prices: bool) -> dict[str, str]:
    """What two runs must share to be compared, each said as the message says it."""
    config = body.config
    shape = {
        "release": body.binding.bundle_content_digest,
        "forms": " ".join(sorted(config.forms)),
        "window": f"{config.start}..{config.end}",
        "arms": " ".join(sorted(config.arms)),
        "clocks": " ".join(c for c in CLOCKS if c in config.clocks),
        "hold_sessions": str(config.hold_sessions),
    }
    if prices:  # returns are compared: they must be priced alike
        shape["prices"] = "none" if config.prices is None else config.prices.file_sha256
    return shape


def _comparable(run: ReceiptBody, base: ReceiptBody, *, prices: bool) -> Rule:
    mine, theirs = _shape(run, prices=prices), _shape(base, prices=prices)
    differs = [f"{k}: run {mine[k]}, baseline {theirs[k]}" for k in mine if mine[k] != theirs[k]]
    if differs:
        return Rule(
            name="comparable",
            ok=False,
            message="the runs are not comparable, so no other rule is judged: "
            + "; ".join(differs),
            items=differs,
        )
    said = ", ".join(f"{k} {v}" for k, v in mine.items() if k not in ("release", "prices"))
    return Rule(
        name="comparable",
        ok=True,
        message=f"same release {mine['release'][:19]}..., {said}"
        + (", same price file" if prices else ""),
    )


def _why_invalid(body: ReceiptBody) -> str | None:
    if body.aborted is not None:
        return f"aborted ({body.aborted})"
    if not body.valid:
        return "invalid (" + "; ".join(body.invalidated_by[:3] or ["no reason given"]) + ")"
    return None


def _valid(run: ReceiptBody, base: ReceiptBody) -> Rule:
    bad = [
        (who, why)
        for who, body in (("run", run), ("baseline", base))
        if (why := _why_invalid(body))
    ]
    if bad:
        return Rule(
            name="valid",
            ok=False,
            message="; ".join(f"the {who} is {why}" for who, why in bad),
            items=[who for who, _ in bad],
        )
    return Rule(
        name="valid", ok=True, message="the run and the baseline are valid, neither aborted"
    )


def _contamination(
    run: ReceiptBody, limit: float, intervals: Intervals | None, because: str | None
) -> list[Rule]:
    rules = []
    for clock in [c for c in CLOCKS if c in run.contamination]:
        deltas = run.contamination[clock]
        for arm in [a for a in CONTROLS if a in run.config.arms and "main" in run.config.arms]:
            key = f"main_minus_{arm}"
            subject = f"{clock} {key}"
            value: float | None = getattr(deltas, key)
            if value is None:
                rules.append(
                    Rule(
                        name="contamination",
                        ok=True,
                        subject=subject,
                        limit=limit,
                        message=f"{subject}: null, main or {arm} has no priced trade at {clock}: "
                        "no delta to judge",
                    )
                )
                continue
            found = (intervals or {}).get(clock, {}).get(key)
            interval = None if found is None else [float(found[0]), float(found[1])]
            rules.append(
                Rule(
                    name="contamination",
                    ok=value <= limit,
                    subject=subject,
                    value=value,
                    limit=limit,
                    interval=interval,
                    message=f"{subject} {_pp(value)} ({_interval_words(interval, because)}): "
                    + ("above" if value > limit else "within")
                    + f" the limit {_points(limit)}"
                    + _interval_reach(interval, value, limit),
                )
            )
    return rules


def _interval_words(interval: list[float] | None, because: str | None) -> str:
    if interval is None:
        return f"{NO_INTERVAL}: {because}" if because else NO_INTERVAL
    low, high = interval
    return f"95% [{low * 100:+.2f}, {high * 100:+.2f}] pp"


def _interval_reach(interval: list[float] | None, value: float, limit: float) -> str:
    """What the interval adds when it lies across the limit: chance alone may have put
    the delta on its side."""
    if interval is None or not interval[0] <= limit < interval[1]:
        return ""
    return "; its interval reaches " + ("below it" if value > limit else "above it")


def _probe_words(body: ReceiptBody) -> str:
    probe = body.probe
    verdict = probe.verdict if isinstance(probe.verdict, str) else None
    if verdict is None:
        return f"the probe did not run (status {probe.status})"
    if isinstance(probe.recovered, int) and isinstance(probe.total, int):
        return f"{verdict} (real date recovered for {probe.recovered} of {probe.total} items)"
    return verdict


def _mask(run: ReceiptBody, base: ReceiptBody, *, require: bool) -> Rule:
    mine = run.probe.verdict if isinstance(run.probe.verdict, str) else None
    theirs = base.probe.verdict if isinstance(base.probe.verdict, str) else None
    said = f"run {_probe_words(run)}; baseline {_probe_words(base)}"
    if require:
        ok = mine == "mask_holds"
        head = "the mask holds" if ok else "the mask must hold (--require-mask-holds)"
        return Rule(name="mask", ok=ok, message=f"{head}: {said}", items=[mine or run.probe.status])
    regressed = theirs == "mask_holds" and mine == "mask_leaks"
    head = (
        "the mask leaks where the baseline's held"
        if regressed
        else "no regression (only a mask that held in the baseline and leaks now fails)"
    )
    return Rule(
        name="mask", ok=not regressed, message=f"{head}: {said}", items=[mine or run.probe.status]
    )


def _gaps(run: ReceiptBody, base: ReceiptBody) -> Rule:
    opened = [g for g in run.protocol_gaps if g not in base.protocol_gaps]
    if opened:
        return Rule(
            name="protocol_gaps",
            ok=False,
            items=opened,
            message=f"open in the run, closed in the baseline: {_listed(opened)} "
            f"(run's gaps: {_listed(run.protocol_gaps)}; baseline's: {_listed(base.protocol_gaps)})",
        )
    return Rule(
        name="protocol_gaps",
        ok=True,
        message=f"no gap the baseline closed is open (run's gaps: {_listed(run.protocol_gaps)}; "
        f"baseline's: {_listed(base.protocol_gaps)})",
    )


def _main_returns(body: ReceiptBody) -> dict[str, float | None]:
    return {c.clock: c.total_return for c in body.cells if c.arm == "main"}


def _return_drop(run: ReceiptBody, base: ReceiptBody, tolerance: float) -> list[Rule]:
    mine, theirs = _main_returns(run), _main_returns(base)
    rules = []
    for clock in [c for c in CLOCKS if c in mine]:
        now, before = mine[clock], theirs.get(clock)
        subject = f"main/{clock}"
        if now is None or before is None:
            # a return that vanished cannot be measured, and a gate on returns does not
            # pass it; one the baseline never had has nothing to fall from
            ok = now is not None or before is None
            why = (
                "neither run has a priced trade there"
                if now is None and before is None
                else "the baseline has no priced trade there: nothing to fall from"
                if before is None
                else "the run has no priced trade there where the baseline had one"
            )
            rules.append(
                Rule(
                    name="return_drop",
                    subject=subject,
                    limit=tolerance,
                    ok=ok,
                    value=now,
                    baseline=before,
                    message=f"{subject} run {_pct(now)}, baseline {_pct(before)}: {why}",
                )
            )
            continue
        drop = before - now
        rules.append(
            Rule(
                name="return_drop",
                subject=subject,
                limit=tolerance,
                ok=drop <= tolerance,
                value=now,
                baseline=before,
                message=f"{subject} run {_pct(now)}, baseline {_pct(before)}: "
                + (f"a drop of {_points(drop)}" if drop > 0 else "no drop")
                + (", beyond" if drop > tolerance else ", within")
                + f" the tolerance {_points(tolerance)}",
            )
        )
    return rules


def _audit(audit: Mapping[str, Any], limit: int) -> Rule:
    totals = audit.get("totals") or {}
    dates, issuers = int(totals.get("date_hits") or 0), int(totals.get("issuer_hits") or 0)
    hits = dates + issuers
    cells = [
        f"{cell.get('arm')}/{cell.get('clock')} {_cell_hits(cell)}"
        for cell in audit.get("cells") or []
        if _cell_hits(cell)
    ]
    return Rule(
        name="reasoning_audit",
        ok=hits <= limit,
        value=float(hits),
        limit=float(limit),
        items=cells,
        message=f"{hits} hits ({dates} real dates, {issuers} real issuers) in "
        f"{_counted(int(totals.get('cells_with_hits') or 0), 'cell')} over "
        f"{_counted(int(totals.get('texts') or 0), 'text')}, "
        + ("above" if hits > limit else "within")
        + f" the limit {limit}"
        + (f": {', '.join(cells)}" if cells else ""),
    )


def _cell_hits(cell: Mapping[str, Any]) -> int:
    return int(cell.get("date_hits") or 0) + int(cell.get("issuer_hits") or 0)
