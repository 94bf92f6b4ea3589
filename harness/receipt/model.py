"""The receipt body as types: every part a run writes, with every field, its type and
whether it may be null.

Each part is a frozen ``msgspec.Struct`` that refuses a field it does not declare, so a
body that decodes is a body the harness could have written. The published JSON Schema
(``schemas/receipt-body.schema.json``) is generated from these types by
``harness.receipt.schemas.generate``; a test holds the file and the types together.

A field that some bodies carry and others do not (the probe that never ran has no
counts, a training cutoff that is a gap has no check) defaults to ``UNSET``, which
leaves it out of the body altogether, as the harness has always written it.

The rest of the engine reads bodies as plain dicts: :func:`body_dict` is that form, and
its canonical JSON is the receipt's body, byte for byte.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType, field

from harness.vocabulary import Arm, Clock

__all__ = ["Arm", "Clock"]  # the vocabulary's words, as the parts use them

INT_MAX = 2**31 - 1  # what a 32-bit database column stores: the site keeps counts in them

# -- the field kinds -----------------------------------------------------------------------

Count = Annotated[int, Meta(ge=0, le=INT_MAX)]
Sha256 = Annotated[str, Meta(pattern="^sha256:[0-9a-f]{64}$")]
BoundSha256 = Annotated[str, Meta(pattern="^sha256:[0-9a-f]{64}$", max_length=71)]
IsoDate = Annotated[str, Meta(extra_json_schema={"format": "date"})]
Form = Annotated[
    str,
    Meta(min_length=1, max_length=32, description="an EDGAR form type (8-K, 10-Q, SC 13D/A ...)"),
]
CellStatus = Literal["complete", "agent_error", "harness_error", "incomplete", "aborted", "not_run"]
ProbeStatus = Literal[
    "complete", "agent_error", "harness_error", "incomplete", "not_run", "not_applicable"
]
Verdict = Literal["mask_holds", "mask_leaks", "inconclusive", "no_items"]
AgentProcess = Literal["isolated", "in_process", "remote"]
SlotStatus = Literal["declared", "gap"]
CutoffCheck = Literal[
    "window_ends_before_cutoff", "window_starts_after_cutoff", "window_crosses_cutoff"
]


class Part(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A part of a receipt body: closed (an unknown field is refused) and immutable.
    (Each part says so again: a type checker reads the options class by class.)"""


# -- what the run was told -----------------------------------------------------------------


class PriceReference(Part, frozen=True, forbid_unknown_fields=True):
    """The price file a config binds: its name and sha256, and the submitter's statement."""

    file: str
    file_sha256: Sha256
    source: str
    pulled_at: str


class IndexReference(Part, frozen=True, forbid_unknown_fields=True):
    """The market index a config binds: its price file's name and sha256, the
    submitter's statement of it, and the symbol of the series."""

    file: str
    file_sha256: Sha256
    source: str
    pulled_at: str
    symbol: Annotated[str, Meta(max_length=200)]


Fee = Annotated[float, Meta(ge=0)]


class CostModel(Part, frozen=True, forbid_unknown_fields=True):
    """Trading frictions (``harness.market.frictions``): a fee in basis points of the
    notional traded on each side, raised to a minimum fee per side for a trade of the
    stated notional."""

    bps_per_side: Annotated[float, Meta(ge=0, le=1000)]
    min_fee_per_side: Fee
    notional: Annotated[float, Meta(gt=0)]


Stamp = Annotated[
    str,
    Meta(
        pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
        description="UTC, whole seconds",
    ),
]


class LogHead(Part, frozen=True, forbid_unknown_fields=True):
    """The commitment log's head when the execution was queued."""

    seq: Count
    digest: Sha256


class ForwardBinding(Part, frozen=True, forbid_unknown_fields=True):
    """The commitment a run executes (the forward track): the commit entry's digest,
    number and stamp, the agent package it committed, the log's head when the run was
    queued, and whether the run is the forward one or the backtest just before it."""

    kind: Literal["forward", "backtest"]
    entry: Sha256
    seq: Count
    stamped_at: Stamp
    agent_digest: Sha256
    log_head: LogHead


class Config(Part, frozen=True, forbid_unknown_fields=True):
    """The settings that can change a result, as the run resolved them."""

    forms: list[Form]
    start: IsoDate
    end: IsoDate
    arms: list[Arm]
    clocks: list[Clock]
    hold_sessions: Count
    agent: Annotated[str, Meta(max_length=200)]
    agent_source_sha256: Sha256 | None
    model_version: Annotated[str, Meta(max_length=200)]
    training_cutoff: Annotated[str, Meta(max_length=10)]
    prices: PriceReference | None
    network_policy: Literal["fail_closed", "abort"]
    agent_process: AgentProcess
    probe_items: Count
    model_endpoints: list[str]
    # an agent in another process (absent for a Python agent): how it was reached, the
    # dialect it spoke and its digest (sha256 over its argv and the files it names, or
    # its URL), which is its agent_source_sha256 too
    agent_transport: Literal["stdio", "http"] | UnsetType = UNSET
    agent_dialect: Literal["pit", "sharpebench"] | UnsetType = UNSET
    agent_digest: Sha256 | UnsetType = UNSET
    # the settings a model-calling agent was handed (``agent_env``: its model's name, its
    # base URL), as it was handed them; absent when it had none
    agent_env: (
        Annotated[
            dict[
                Annotated[str, Meta(pattern="^[A-Za-z_][A-Za-z0-9_]*$", max_length=200)],
                Annotated[str, Meta(max_length=2000)],
            ],
            Meta(max_length=32),
        ]
        | UnsetType
    ) = UNSET
    # the commitment the run executes; absent for an ordinary run
    forward: ForwardBinding | UnsetType = UNSET
    # the fault plan its agent ran under; absent without one
    fault_plan: FaultPlanBinding | UnsetType = UNSET
    # the market index the cells are measured against, and the trading frictions their
    # returns pay; each absent without one
    benchmark_index: IndexReference | UnsetType = UNSET
    costs: CostModel | UnsetType = UNSET


Hex64 = Annotated[str, Meta(pattern="^[0-9a-f]{64}$")]
Relaxation = Literal[
    "read_your_writes", "position_sign_convention", "submission_acceptance", "complete_results"
]
FaultName = Annotated[str, Meta(pattern="^[a-z0-9_-]{1,64}$")]


class FaultMode(Part, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A fault's mode and its one parameter (the largest lag, span or rejection count)."""

    mode: Literal["projection_lag", "amount_sign", "rate_limit"]
    max_lag_steps: Count | UnsetType = UNSET
    max_span_steps: Count | UnsetType = UNSET
    max_rejected_presentations: Count | UnsetType = UNSET


class PlannedFault(Part, frozen=True, forbid_unknown_fields=True):
    id: FaultName
    cohort_ppm: Count
    fault: FaultMode
    group: FaultName | UnsetType = UNSET


class FaultPlanBinding(Part, frozen=True, forbid_unknown_fields=True):
    """The fault plan the run's agent ran under (seed 002, ``sharpebench.fault-plan.v1``),
    whole, with its digest: sha256 of the validated plan's compact JSON."""

    sha256: Hex64
    schema_version: Literal["sharpebench.fault-plan.v1"]
    seed: Annotated[
        int,
        Meta(
            ge=0,
            description="the plan's seed, a u64 (0 to 2**64 - 1): kept in the body, "
            "never in a column",
        ),
    ]
    declared_relaxations: list[Relaxation]
    faults: Annotated[list[PlannedFault], Meta(min_length=1, max_length=64)]


class FaultDenominator(Part, frozen=True, forbid_unknown_fields=True):
    """How often one fault met the run: cells run, cells it was assigned to, cells
    whose evidence shows it fired."""

    fault_id: FaultName
    cells: Count
    assigned: Count
    fired: Count


class FaultEvidence(Part, frozen=True, forbid_unknown_fields=True):
    """One cell's faults: the cell as the draws know it, the faults assigned to it and
    the events they made (with the agent's graded responses)."""

    arm: Arm
    clock: Clock
    window_start: Count  # the day ordinal of the window's first session
    window_end: Count  # and of the day after its last
    seed: Count  # the cell's place in the grid of arms by clocks
    assigned: list[FaultName]
    events: Annotated[list[dict[str, Any]], Meta(max_length=100_000)]


class FaultInjection(Part, frozen=True, forbid_unknown_fields=True):
    """What a fault plan did to the run: rank-neutral evidence, never in a return, a
    figure or a rank."""

    schema_version: Literal["pit-harness.fault-injection-report.v1"]
    rank_neutral: Literal[True]
    plan_sha256: Hex64
    declared_relaxations: list[Relaxation]
    entrant_declaration: Annotated[str, Meta(max_length=10_000)]
    denominators: list[FaultDenominator]
    evidence: list[FaultEvidence]


class Harness(Part, frozen=True, forbid_unknown_fields=True):
    name: str
    version: str


class Binding(Part, frozen=True, forbid_unknown_fields=True):
    """The three hashes a reader recomputes against the files they hold."""

    bundle_content_digest: BoundSha256
    config_sha256: BoundSha256
    trajectory_sha256: BoundSha256


class Window(Part, frozen=True, forbid_unknown_fields=True):
    start: IsoDate
    end: IsoDate


class Release(Part, frozen=True, forbid_unknown_fields=True):
    """The release as the run read it: its name, the window, the forms and their rows."""

    name: str
    window: Window
    forms: list[str]
    rows: Count
    rows_by_form: dict[str, Count]


class Trajectory(Part, frozen=True, forbid_unknown_fields=True):
    path: str
    events: Count
    sha256: Sha256


# -- what the run did ----------------------------------------------------------------------


class Fault(Part, frozen=True, forbid_unknown_fields=True):
    """The kind and message of an agent's fault."""

    kind: str
    message: str


Interval = Annotated[list[float], Meta(min_length=2, max_length=2)]


class MarketSide(Part, frozen=True, forbid_unknown_fields=True):
    """The cell's daily returns on the sessions the index rose (or fell)."""

    sessions: Count
    mean_return: float | None


class CellMarket(Part, frozen=True, forbid_unknown_fields=True):
    """A cell's same trades measured against the config's market index
    (``harness.market.index``): excess return over each trade's hold; the daily series'
    beta and alpha (per session) by least squares, with moving-block bootstrap intervals;
    its mean return on the sessions the index rose and fell."""

    excess_return: float | None
    excess_trades: Count
    sessions: Count
    beta: float | None
    beta_interval_95: Interval | None
    alpha_per_session: float | None
    alpha_interval_95: Interval | None
    up_sessions: MarketSide
    down_sessions: MarketSide


# a sum of tokens (or nanodollars) can pass a 32-bit column: up to JSON's exact integers (a
# sum that would pass them stays at the bound)
TOKENS_MAX = 2**53 - 1
Tokens = Annotated[
    int,
    Meta(
        ge=0,
        le=TOKENS_MAX,
        description="a sum of tokens or nanodollars, up to 2^53 - 1: a 64-bit column",
    ),
]
ModelName = Annotated[str, Meta(min_length=1, max_length=200)]
UnknownUsage = Literal[
    "unanswered", "error_status", "unreadable_body", "unknown_shape", "no_usage", "no_model",
    "bad_count",
]  # fmt: skip


class ModelTokens(Part, frozen=True, forbid_unknown_fields=True):
    """One model's tokens over the exchanges it answered whose usage was read. ``input``
    counts every prompt token, of which ``cached_input`` were read from a cache and
    ``cache_write_input`` written to one; ``output`` every completion token, of which
    ``reasoning`` were reasoning."""

    exchanges: Count
    input_tokens: Tokens
    output_tokens: Tokens
    cached_input_tokens: Tokens
    cache_write_input_tokens: Tokens
    reasoning_tokens: Tokens


class DecisionTokens(Part, frozen=True, forbid_unknown_fields=True):
    """The cell's decisions and the exchanges each made: those recorded after the decision
    before it (or the cell's start) belong to it."""

    decisions: Count
    with_exchanges: Count  # decisions that made at least one exchange
    with_unknown: Count  # decisions at least one of whose exchanges has no known usage
    input_tokens: Tokens  # over the decisions' exchanges whose usage was read
    output_tokens: Tokens
    most_tokens: Tokens  # input plus output of the decision that used the most


class SelfReportedCost(Part, frozen=True, forbid_unknown_fields=True):
    """What the agent said its decisions cost (sharpebench's ``cost``), summed as said:
    not measured, not checked. ``cost_nanodollars`` is ``cost_usd`` in billionths."""

    decisions: Count  # decisions that carried a cost
    cost_nanodollars: Tokens
    tokens_in: Tokens
    tokens_out: Tokens
    reasoning_tokens: Tokens


class CellUsage(Part, frozen=True, forbid_unknown_fields=True):
    """A cell's model usage, measured from the exchanges the run's model proxy recorded:
    every exchange its agent made, its failed attempts' and (in the cell whose toolbox
    served it) the probe's included. Tokens are summed over the exchanges whose usage was
    read; the others are counted as unknown, by reason, never guessed."""

    exchanges: Count
    unknown_exchanges: Count
    unknown_because: dict[UnknownUsage, Count]
    failed_attempt_exchanges: Count
    probe_exchanges: Count
    input_tokens: Tokens
    output_tokens: Tokens
    cached_input_tokens: Tokens
    cache_write_input_tokens: Tokens
    reasoning_tokens: Tokens
    by_model: dict[ModelName, ModelTokens]
    decisions: DecisionTokens
    self_reported: SelfReportedCost | UnsetType = UNSET


class Cell(Part, frozen=True, forbid_unknown_fields=True):
    """One (arm, clock) of the grid: what the agent was served and what its picks scored."""

    arm: Arm
    clock: Clock
    reachable: bool
    status: CellStatus
    agent_fault: Fault | None
    entered_before_acceptance: Count
    knowable_before_acceptance: Count
    sessions: Count
    decisions_with_picks: Count
    rejected_picks: Count
    agent_errors: Count
    tool_calls: Count
    rows_served: Count
    pit_fallbacks_served: Count
    unreached_rows: Count
    trades: Count
    priced_trades: Count
    unpriced: dict[str, Count]
    total_return: float | None
    trades_sha256: Sha256
    # with the config's costs: the mean priced trade's return net of both sides' fees
    total_return_after_costs: float | UnsetType | None = UNSET
    # with the config's benchmark index: the same trades measured against the market
    market: CellMarket | UnsetType = UNSET
    # an agent speaking sharpebench's dialect: its orders that opened no position (sizing,
    # sells, closes, holds, negative weights), accepted and recorded, not scored
    ignored_orders: Count | UnsetType = UNSET
    # a run that declared model endpoints: what the cell's agent used of its models
    usage: CellUsage | UnsetType = UNSET


class AnswerKey(Part, frozen=True, forbid_unknown_fields=True):
    """What a probe item's answer is scored against: the real dates and issuer."""

    dates: list[str]
    issuer: str | None
    ticker: str | None


class Score(Part, frozen=True, forbid_unknown_fields=True):
    date_recovered: bool
    matched: list[str]
    renderings: list[str]
    year_recovered: bool
    issuer_recovered: bool
    issuer_matched_by: str | None


class ProbeItem(Part, frozen=True, forbid_unknown_fields=True):
    item: Count
    row_key: Annotated[str, Meta(max_length=40)]
    answer: str
    answer_key: AnswerKey
    score: Score
    agent_error: str | None


class Probe(Part, frozen=True, forbid_unknown_fields=True):
    """The mask probe on the shifted arm. A probe that did not run (or that the harness
    failed to run) carries its arm, status and no items, and nothing else."""

    arm: Arm
    status: ProbeStatus
    items: Annotated[list[ProbeItem], Meta(max_length=1000)]
    fault: Fault | UnsetType | None = UNSET
    stride: Count | UnsetType = UNSET
    served_rows: Count | UnsetType = UNSET
    total: Count | UnsetType = UNSET
    recovered: Count | UnsetType = UNSET
    year_only: Count | UnsetType = UNSET
    issuer_recovered: Count | UnsetType = UNSET
    agent_errors: Count | UnsetType = UNSET
    verdict: Verdict | UnsetType = UNSET


class Delta(Part, frozen=True, forbid_unknown_fields=True):
    """Per clock: the main arm's return minus each control arm's."""

    main_minus_shifted: float | None
    main_minus_redacted: float | None


class EgressAttempt(Part, frozen=True, forbid_unknown_fields=True):
    """A network attempt the guard stopped, with its call site."""

    call: str
    target: str
    site: str
    stack: list[str]


class ModelEgress(Part, frozen=True, forbid_unknown_fields=True):
    endpoints: list[str]
    exchanges: dict[str, Count]
    line: str


class WireAttempt(Part, frozen=True, forbid_unknown_fields=True):
    """An attempt the cell's wire saw, outside the agent's reach (its time is in the
    trajectory's ``wire_attempt`` event)."""

    cell: str
    protocol: str
    address: str
    port: Count | None


class Network(Part, frozen=True, forbid_unknown_fields=True):
    """``egress_attempts`` is the count: in an isolated run whose cells' wires the harness
    held (``counted: wire``), what the wires saw and the model proxy refused, with the
    guard's call sites beside it (``guard_sites``) and any difference said; otherwise
    what the guard recorded."""

    guard: str
    policy: str
    clean: bool
    egress_attempts: Count
    attempts: list[EgressAttempt]
    scope: str
    model_egress: ModelEgress
    counted: Literal["wire", "guard"] | UnsetType = UNSET
    wire: list[WireAttempt] | UnsetType = UNSET
    guard_sites: Count | UnsetType = UNSET
    difference: str | UnsetType | None = UNSET


class Capabilities(Part, frozen=True, forbid_unknown_fields=True):
    """What was and was not enforced. An in-process run says why isolation was not used;
    an isolated one what its sandbox's probe found (its uid, the environment's variable
    names) and the limits the sandbox was given (as set, in the sandbox's own units)."""

    agent_process: AgentProcess
    network_isolated: bool
    filesystem_confined: bool
    pid_isolated: bool
    capabilities_dropped: bool
    memory_enforced: bool
    cpu_enforced: bool
    processes_enforced: bool
    open_files_enforced: bool
    cells_isolated: bool
    harness_state_protected: bool
    limits_scope: str | None
    sandbox: str | None
    line: str
    isolation_unavailable: str | UnsetType | None = UNSET
    uid: Count | UnsetType | None = UNSET
    environment: list[str] | UnsetType | None = UNSET
    limits: dict[str, Any] | UnsetType = UNSET
    # an isolated run's: each cell forked from a template process that runs no agent code
    cell_start: Literal["forked_from_template"] | UnsetType = UNSET


class Attempt(Part, frozen=True, forbid_unknown_fields=True):
    """An attempt that failed on the harness's side and was run again."""

    cell: Annotated[str, Meta(max_length=64)]
    attempt: Count
    failure: Annotated[str, Meta(max_length=500)]
    egress_attempts: list[dict[str, Any]]
    model_exchanges: Count


# -- the protocol slots P1-P6 --------------------------------------------------------------


class ModelVersionSlot(Part, frozen=True, forbid_unknown_fields=True):
    """P1: the model version as the config declares it, or a gap."""

    kind: Literal["declared"]
    status: SlotStatus
    declared: str | None


class TrainingCutoffSlot(Part, frozen=True, forbid_unknown_fields=True):
    """P2: the declared training cutoff, checked against the window; a gap has no check."""

    kind: Literal["declared_then_checked"]
    status: SlotStatus
    declared: str | None
    check: CutoffCheck | UnsetType = UNSET
    meaning: str | UnsetType = UNSET


class RetrievalSlot(Part, frozen=True, forbid_unknown_fields=True):
    """P3: what the cells were served, and how many of the window's rows carry a stamp."""

    kind: Literal["measured"]
    status: Literal["measured"]
    tool_calls: Count
    rows_served: Count
    rows_in_window: Count
    acceptance_stamped_rows: Count
    pit_fallback_rows: Count
    pit_fallbacks_served: Count
    rule: str


class PriceStatement(Part, frozen=True, forbid_unknown_fields=True):
    """The prices as the submitter states them: declared, not verified."""

    source: Annotated[str, Meta(max_length=2000)]
    pulled_at: Annotated[str, Meta(max_length=200)]
    basis: Literal["open", "close"]
    file: str
    file_sha256: Sha256
    bars: Count
    verified_by_harness: bool


class CostStatement(CostModel, frozen=True, forbid_unknown_fields=True):
    """The config's cost model as P4 records it, with how it was applied."""

    applied: Annotated[str, Meta(max_length=2000)]


class IndexStatement(Part, frozen=True, forbid_unknown_fields=True):
    """The market index as the submitter states it (declared, not verified) and where
    it is read against the trades."""

    source: Annotated[str, Meta(max_length=2000)]
    pulled_at: Annotated[str, Meta(max_length=200)]
    symbol: Annotated[str, Meta(max_length=200)]
    file: str
    file_sha256: Sha256
    levels: Count
    basis: Annotated[str, Meta(max_length=200)]
    verified_by_harness: bool


class CostsSlot(Part, frozen=True, forbid_unknown_fields=True):
    """P4: the prices as stated and the frictions not modelled."""

    kind: Literal["declared"]
    status: Literal["declared"]
    prices: PriceStatement | None
    entry: str
    hold_sessions: Count
    costs: str | CostStatement
    slippage: str
    shorts: bool
    # the market index the cells are measured against (absent without one)
    benchmark_index: IndexStatement | UnsetType = UNSET


class ProvenanceSlot(Part, frozen=True, forbid_unknown_fields=True):
    """P5: the release and the window the run walked."""

    kind: Literal["measured"]
    status: Literal["measured"]
    release: str
    content_digest: Sha256
    provenance: str | None
    source_kind: str | None
    window: Window
    forms: list[str]
    sessions: Count
    first_session: str | None
    last_session: str | None


class FormCell(Part, frozen=True, forbid_unknown_fields=True):
    trades: Count
    priced_trades: Count
    total_return: float | None


class DisaggregationSlot(Part, frozen=True, forbid_unknown_fields=True):
    """P6: trades and returns per form, per cell (``arm/clock``)."""

    kind: Literal["measured"]
    status: Literal["measured"]
    by_form: dict[str, dict[str, FormCell]]


class Protocol(Part, frozen=True, forbid_unknown_fields=True):
    """P1-P6, each slot an object; P4's prices is the submitter's statement or null."""

    p1: ModelVersionSlot = field(name="P1_model_version")
    p2: TrainingCutoffSlot = field(name="P2_training_cutoffs")
    p3: RetrievalSlot = field(name="P3_retrieval_timestamps")
    p4: CostsSlot = field(name="P4_costs_and_frictions")
    p5: ProvenanceSlot = field(name="P5_window_provenance")
    p6: DisaggregationSlot = field(name="P6_disaggregation")

    def slots(self) -> dict[str, Slot]:
        """Each slot by its published name."""
        return {f.encode_name: getattr(self, f.name) for f in msgspec.structs.fields(self)}


Slot = (
    ModelVersionSlot
    | TrainingCutoffSlot
    | RetrievalSlot
    | CostsSlot
    | ProvenanceSlot
    | DisaggregationSlot
)


# -- the placebo split ---------------------------------------------------------------------


class PlaceboSide(Part, frozen=True, forbid_unknown_fields=True):
    """One side of the cutoff at one clock: the entry sessions with a priced trade, each
    arm's priced trades, and main minus each control arm the run had (a delta and its 95%
    interval; null where an arm has no priced trade on the side)."""

    sessions: Count
    main_trades: Count
    shifted_trades: Count | UnsetType = UNSET
    redacted_trades: Count | UnsetType = UNSET
    main_minus_shifted: float | UnsetType | None = UNSET
    main_minus_shifted_interval_95: Interval | UnsetType | None = UNSET
    main_minus_redacted: float | UnsetType | None = UNSET
    main_minus_redacted_interval_95: Interval | UnsetType | None = UNSET


class PlaceboClock(Part, frozen=True, forbid_unknown_fields=True):
    before: PlaceboSide
    after: PlaceboSide


class Placebo(Part, frozen=True, forbid_unknown_fields=True):
    """The contamination delta before and after the declared training cutoff, for a
    window that crosses it: memory predicts a delta before and none after."""

    cutoff: IsoDate
    split: Annotated[str, Meta(max_length=500)]
    clocks: dict[Clock, PlaceboClock]


# -- the body ------------------------------------------------------------------------------


class ReceiptBody(Part, frozen=True, forbid_unknown_fields=True):
    """The body of a pit-harness receipt (the part body_sha256 hashes)."""

    receipt_version: Literal[2]
    run_id: Annotated[str, Meta(pattern="^[0-9a-f]{16}$", max_length=16)]
    harness: Harness
    valid: bool
    invalidated_by: list[str]
    aborted: str | None
    rankable: bool
    not_rankable_because: list[str]
    capabilities: Capabilities
    capability_line: Annotated[str, Meta(max_length=2000)]
    binding: Binding
    config: Config
    release: Release
    sessions: list[IsoDate]
    cells: Annotated[list[Cell], Meta(min_length=1, max_length=9)]
    contamination: dict[str, Delta]
    probe: Probe
    network: Network
    trajectory: Trajectory
    protocol: Protocol
    protocol_complete: bool
    protocol_gaps: list[str]
    limits: list[str]
    attempts: Annotated[
        list[Attempt],
        Meta(
            max_length=4096,
            description=(
                "The ledger of attempts that failed on the harness's side (the agent's "
                "process died, hung or its pipe broke) and were run again from the cell's "
                "first step; what each did that counts (egress attempts, model exchanges) "
                "is in the trajectory too."
            ),
        ),
    ]
    # a window that crosses the declared training cutoff: the delta on each side of it
    placebo: Placebo | UnsetType = UNSET
    # a run under a fault plan: what the plan's faults did, rank-neutral
    fault_injection: FaultInjection | UnsetType = UNSET


class BodyError(ValueError):
    """A receipt body that is not one: an unknown field, a wrong type, a value out of
    bounds, named by its path (``$.cells[0].trades``)."""


_DECODER = msgspec.json.Decoder(ReceiptBody)


def decode_body(raw: bytes | str) -> ReceiptBody:
    """The typed body of a body's JSON text; BodyError naming the field otherwise."""
    try:
        return _DECODER.decode(raw)
    except msgspec.ValidationError as exc:
        raise BodyError(_located(exc)) from None
    except msgspec.DecodeError as exc:
        raise BodyError(f"receipt body: not JSON ({exc})") from None


def body_from_dict(body: dict[str, Any]) -> ReceiptBody:
    """The typed body of a body already parsed; BodyError naming the field otherwise."""
    try:
        return msgspec.convert(body, ReceiptBody, strict=True)
    except msgspec.ValidationError as exc:
        raise BodyError(_located(exc)) from None


def _located(exc: msgspec.ValidationError) -> str:
    """msgspec's message, which names the path below the body (and none at its top)."""
    message = str(exc)
    return f"receipt body: {message}" + ("" if " - at `" in message else " - at `$`")


def body_dict(body: ReceiptBody) -> dict[str, Any]:
    """The body as the plain dict the rest of the engine reads."""
    plain: dict[str, Any] = msgspec.to_builtins(body)
    return plain
