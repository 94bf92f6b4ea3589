"""Fault plans (seed 002; sharpebench's ``sharpebench.fault-plan.v1``): a seeded plan of
faults an operator runs an external agent under, each changing only what the agent is
shown or which of its submissions is accepted, never the book.

A plan declares exactly the relaxations its faults use (a declared relaxation no fault
uses, or a used one not declared, is refused), every level is closed, and every bound is
checked before anything starts: ``load_plan`` reads a file, ``parse_plan`` its bytes,
and a refusal is a ``FaultPlanError`` saying which rule. ``plan_digest`` is the plan's
identity (reformatting its JSON leaves it alone, reordering its faults does not), bound
into the run's config. The draws (``draw_u64``, ``cohort``, ``parameter``) are pure
functions of the plan, its digest and the cell: no clock, no random source, so a run
re-executed under the same plan meets the same faults at the same steps.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
from datetime import date
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from harness.vocabulary import ARMS, CLOCKS

SCHEMA_VERSION = "sharpebench.fault-plan.v1"
MAX_FAULT_PLAN_BYTES = 64 * 1024
MAX_FAULTS = 64
MAX_MODE_PARAMETER = 64
PPM = 1_000_000
DRAW_TAG = b"sharpebench.fault-draw.v1"
_NAME = re.compile(r"[a-z0-9_-]{1,64}")

# the relaxations, in their declared order (a plan's declarations are stored sorted so)
RELAXATIONS = (
    "read_your_writes",
    "position_sign_convention",
    "submission_acceptance",
    "complete_results",
)
Relaxation = Literal[
    "read_your_writes", "position_sign_convention", "submission_acceptance", "complete_results"
]

# mode -> (its one parameter, the relaxation it needs, whether a plan may arm it)
MODES: dict[str, tuple[str, str, bool]] = {
    "projection_lag": ("max_lag_steps", "read_your_writes", True),
    "amount_sign": ("max_span_steps", "position_sign_convention", True),
    "rate_limit": ("max_rejected_presentations", "submission_acceptance", True),
    # never armable: the observation has no paged read for it to cut short
    "limit_before_sort": ("page_size", "complete_results", False),
}

# What the operator publishes to the entrant before the sweep, one text per relaxation.
DECLARATIONS = {
    "read_your_writes": (
        "read-your-writes is relaxed: after an order executes, the cash and positions later "
        "observations show may keep their pre-execution values for a bounded number of "
        "decision steps. The order has executed and the book is authoritative; the date and "
        "the symbols stay current. Restating your last target (an order's target_weight) is "
        "the idempotent response; a pick buys again, so not picking the row again is."
    ),
    "position_sign_convention": (
        "the position sign convention is relaxed: a nonzero held quantity may be shown with "
        "the opposite sign for a bounded number of decision steps. Zero is left alone and "
        "the book is unchanged; a response is graded against your own last stated target."
    ),
    "submission_acceptance": (
        "submission acceptance is relaxed: a decision that carries orders or picks may be "
        "rejected under a rate limit, signalled by presenting the identical observation "
        "again, a bounded number of times; only the decision answering the first "
        "presentation after that executes. A hold never starts a limit. A deterministic "
        "entrant restates its decision and loses nothing."
    ),
    "complete_results": (
        "complete results is declared for completeness only: no plan can arm it, because "
        "the observation has no paged read."
    ),
}


class FaultPlanError(ValueError):
    """A fault plan refused before anything starts, saying which rule."""


class _Closed(msgspec.Struct, forbid_unknown_fields=True, frozen=True, tag_field="mode"):
    pass


class ProjectionLag(_Closed, frozen=True, tag="projection_lag"):
    max_lag_steps: int


class AmountSign(_Closed, frozen=True, tag="amount_sign"):
    max_span_steps: int


class RateLimit(_Closed, frozen=True, tag="rate_limit"):
    max_rejected_presentations: int


class LimitBeforeSort(_Closed, frozen=True, tag="limit_before_sort"):
    page_size: int


Mode = ProjectionLag | AmountSign | RateLimit | LimitBeforeSort


class Fault(msgspec.Struct, forbid_unknown_fields=True, frozen=True, omit_defaults=True):
    id: str
    cohort_ppm: int
    fault: Mode
    group: str | UnsetType = UNSET

    @property
    def mode(self) -> str:
        return str(type(self.fault).__struct_config__.tag)

    @property
    def bound(self) -> int:
        """The mode's one parameter: the largest lag, span or rejection count it draws."""
        value: int = getattr(self.fault, MODES[self.mode][0])
        return value

    @property
    def relaxation(self) -> str:
        return MODES[self.mode][1]


class FaultPlan(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    schema_version: str
    seed: int  # a u64: checked by ``checked``
    declared_relaxations: list[Relaxation]
    faults: list[Fault]

    def record(self) -> dict[str, Any]:
        """The validated plan in its fields' order (declarations sorted and folded,
        ``group`` left out where absent): what the digest is taken over."""
        return {
            "schema_version": self.schema_version,
            "seed": self.seed,
            "declared_relaxations": list(self.declared_relaxations),
            "faults": [
                {
                    "id": f.id,
                    **({} if isinstance(f.group, UnsetType) else {"group": f.group}),
                    "cohort_ppm": f.cohort_ppm,
                    "fault": {"mode": f.mode, MODES[f.mode][0]: f.bound},
                }
                for f in self.faults
            ],
        }

    @property
    def sha256(self) -> str:
        return plan_digest(self)

    def declaration(self) -> str:
        """The text the operator publishes to the entrant: one "- " line per relaxation."""
        return "\n".join(f"- {DECLARATIONS[name]}" for name in self.declared_relaxations)


_DECODER = msgspec.json.Decoder(FaultPlan)


def plan_digest(plan: FaultPlan) -> str:
    """sha256 hex of the validated record's compact JSON, its fields in order."""
    text = json.dumps(plan.record(), separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def load_plan(path: str | os.PathLike[str]) -> FaultPlan:
    """The plan in ``path``, validated; FaultPlanError (naming the file) otherwise."""
    file = Path(path)
    try:
        if file.is_dir():
            raise FaultPlanError(f"{file}: a folder, not a fault plan file")
        with file.open("rb") as handle:
            raw = handle.read(MAX_FAULT_PLAN_BYTES + 1)
    except FileNotFoundError:
        raise FaultPlanError(f"{file}: no such fault plan file") from None
    except OSError as exc:
        raise FaultPlanError(f"{file}: cannot be read ({exc.strerror})") from None
    try:
        return parse_plan(raw)
    except FaultPlanError as exc:
        raise FaultPlanError(f"{file}: {exc}") from None


def parse_plan(raw: bytes) -> FaultPlan:
    """A plan from its JSON bytes, every rule checked; FaultPlanError otherwise."""
    if len(raw) > MAX_FAULT_PLAN_BYTES:
        raise FaultPlanError(f"larger than {MAX_FAULT_PLAN_BYTES} bytes")
    try:
        plan = _DECODER.decode(raw)
    except msgspec.ValidationError as exc:
        raise FaultPlanError(f"not a fault plan: {exc}") from None
    except msgspec.DecodeError as exc:
        raise FaultPlanError(f"not JSON: {exc}") from None
    return checked(plan)


def plan_from_record(data: Any) -> FaultPlan:
    """A plan given as parsed JSON (a config's ``fault_plan``), every rule checked."""
    if isinstance(data, FaultPlan):
        return checked(data)
    claimed = data.get("sha256") if isinstance(data, dict) else None
    if isinstance(data, dict):  # a bound record carries its digest beside the plan
        data = {k: v for k, v in data.items() if k != "sha256"}
    try:
        size = len(json.dumps(data, separators=(",", ":")).encode())
    except (TypeError, ValueError, RecursionError):
        raise FaultPlanError("not a fault plan: not a JSON value") from None
    if size > MAX_FAULT_PLAN_BYTES:
        raise FaultPlanError(f"larger than {MAX_FAULT_PLAN_BYTES} bytes")
    try:
        plan = msgspec.convert(data, FaultPlan, strict=True)
    except msgspec.ValidationError as exc:
        raise FaultPlanError(f"not a fault plan: {exc}") from None
    checked_plan = checked(plan)
    if claimed is not None and claimed != checked_plan.sha256:
        raise FaultPlanError("its sha256 is not the digest of the plan it names")
    return checked_plan


def checked(plan: FaultPlan) -> FaultPlan:
    """``plan`` with every rule checked and its declarations folded and sorted."""
    if plan.schema_version != SCHEMA_VERSION:
        raise FaultPlanError(
            f"schema_version must be {SCHEMA_VERSION!r}, not {plan.schema_version!r}"
        )
    if not 0 <= plan.seed < 2**64:
        raise FaultPlanError(f"seed must be an integer from 0 to 2**64 - 1, not {plan.seed}")
    if not 1 <= len(plan.faults) <= MAX_FAULTS:
        raise FaultPlanError(f"a plan carries 1 to {MAX_FAULTS} faults, not {len(plan.faults)}")
    _check_faults(plan.faults)
    declared = set(plan.declared_relaxations)
    used = {fault.relaxation for fault in plan.faults}
    if declared != used:
        unused = sorted(declared - used, key=RELAXATIONS.index)
        undeclared = sorted(used - declared, key=RELAXATIONS.index)
        said = []
        if unused:
            said.append(f"declared but used by no fault: {', '.join(unused)}")
        if undeclared:
            said.append(f"used but not declared: {', '.join(undeclared)}")
        raise FaultPlanError(
            "the declared relaxations must be exactly those the faults use; " + "; ".join(said)
        )
    ordered = sorted(declared, key=RELAXATIONS.index)
    return msgspec.structs.replace(plan, declared_relaxations=ordered)


def _check_faults(faults: list[Fault]) -> None:
    """Each fault armable and in bounds, ids unique, each group's rates within one draw."""
    seen: set[str] = set()
    groups: dict[str, int] = {}
    for fault in faults:
        if not MODES[fault.mode][2]:
            raise FaultPlanError(
                f"fault {fault.id!r}: mode {fault.mode} ({fault.relaxation}) cannot be armed: "
                "it cuts a paged read short, and the observation has none (sharpebench's "
                "reconciliation, row 29)"
            )
        _check_fault(fault)
        if fault.id in seen:
            raise FaultPlanError(f"fault id {fault.id!r} is used twice")
        seen.add(fault.id)
        if not isinstance(fault.group, UnsetType):
            groups[fault.group] = groups.get(fault.group, 0) + fault.cohort_ppm
    for group, total in groups.items():
        if total > PPM:
            raise FaultPlanError(
                f"group {group!r}: its faults' cohort_ppm sum to {total}, more than {PPM}"
            )


def _check_fault(fault: Fault) -> None:
    for what, value in (("id", fault.id), ("group", fault.group)):
        if isinstance(value, str) and not _NAME.fullmatch(value):
            raise FaultPlanError(f"fault {what} {value!r}: 1 to 64 characters of [a-z0-9_-]")
    if not 1 <= fault.cohort_ppm <= PPM:
        raise FaultPlanError(
            f"fault {fault.id!r}: cohort_ppm must be 1 to {PPM}, not {fault.cohort_ppm}"
        )
    if not 1 <= fault.bound <= MAX_MODE_PARAMETER:
        raise FaultPlanError(
            f"fault {fault.id!r}: {MODES[fault.mode][0]} must be 1 to {MAX_MODE_PARAMETER}, "
            f"not {fault.bound}"
        )


# -- the draws: pure functions of the plan, its digest and the cell ------------------


def _framed(value: bytes) -> bytes:
    return struct.pack("<Q", len(value)) + value


def draw_u64(label: str, key: str, plan_sha256: str, seed: int, cell: tuple[int, int, int]) -> int:
    """sha256 over the draw's tag, ``label``, ``key`` and the plan's digest (each
    length-prefixed, u64 little-endian), the plan's seed and the cell's window start,
    window end and seed (u64 little-endian); its first eight bytes, big-endian."""
    start, end, cell_seed = cell
    digest = hashlib.sha256(
        _framed(DRAW_TAG)
        + _framed(label.encode())
        + _framed(key.encode())
        + _framed(plan_sha256.encode())
        + struct.pack("<QQQQ", seed, start, end, cell_seed)
    ).digest()
    return int.from_bytes(digest[:8], "big")


def scaled(draw: int, bound: int) -> int:
    """A draw scaled into ``[0, bound)``."""
    return (draw * bound) >> 64


def cohort(plan: FaultPlan, cell: tuple[int, int, int]) -> list[Fault]:
    """The faults assigned to ``cell``, in plan order. An ungrouped fault hits when its
    own draw falls below its ppm; a group shares one draw, split into its faults'
    consecutive ranges in plan order, so at most one fault of a group is assigned."""
    sha = plan.sha256
    hit: list[Fault] = []
    floors: dict[str, int] = {}
    for fault in plan.faults:
        if isinstance(fault.group, UnsetType):
            if (
                scaled(draw_u64("independent", fault.id, sha, plan.seed, cell), PPM)
                < fault.cohort_ppm
            ):
                hit.append(fault)
            continue
        draw = scaled(draw_u64("group", fault.group, sha, plan.seed, cell), PPM)
        floor = floors.get(fault.group, 0)
        floors[fault.group] = floor + fault.cohort_ppm
        if floor <= draw < floor + fault.cohort_ppm:
            hit.append(fault)
    return hit


def parameter(
    plan: FaultPlan, fault: Fault, name: str, bound: int, cell: tuple[int, int, int]
) -> int:
    """A fault's drawn parameter ``name`` in ``[0, bound)``."""
    return scaled(draw_u64(f"parameter:{name}", fault.id, plan.sha256, plan.seed, cell), bound)


# the name each mode draws its amount under (``parameter:<name>``), sharpebench's own
AMOUNTS = {"projection_lag": "lag", "amount_sign": "span", "rate_limit": "rejected"}


def arming(
    plan: FaultPlan, fault: Fault, steps: int, cell: tuple[int, int, int]
) -> tuple[int, int]:
    """Where a fault arms in a cell of ``steps`` steps and how far it reaches: the step
    in ``[0, steps)`` and its lag, span or rejection count in ``1..=bound``."""
    at = parameter(plan, fault, "arm_step", steps, cell)
    amount = 1 + parameter(plan, fault, AMOUNTS[fault.mode], fault.bound, cell)
    return at, amount


def cell_coordinates(arm: str, clock: str, sessions: list[str]) -> tuple[int, int, int]:
    """A cell as the draws know it: its window's first session and the day after its
    last, as proleptic Gregorian ordinals, and its place in the full grid (arms by
    clocks, in the vocabulary's order), whichever cells a run has."""
    first = date.fromisoformat(sessions[0]).toordinal() if sessions else 0
    last = date.fromisoformat(sessions[-1]).toordinal() + 1 if sessions else 0
    return first, last, ARMS.index(arm) * len(CLOCKS) + CLOCKS.index(clock)
