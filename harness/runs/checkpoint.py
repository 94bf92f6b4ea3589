"""Sweeps that resume (``pit-harness run --checkpoint FILE``): a run's progress kept in a
file as it is made, bound to the exact invocation that made it, so that a run stopped
part way (killed, its machine gone) is finished by giving the same command again.

The file holds a contract, its digest, and what was saved. The contract is what makes a
run this run: the release's content digest, the run's config digest (``identity``: the
agent and its digest, the external transport, the window, the prices, a fault plan),
the fault plan's digest again, the agent's digest, the harness's version, the retry
policy, the cells in order, the names of the variables passed to the agent and the
sandbox's limits. What is saved, in the order it happened: each failed attempt (its
ledger entry and the events that outlive it), before the next attempt starts, and each
cell's record (``records.CellRecord``, as ``run_cell`` makes one) when the cell ends,
before the next cell starts.

A resume with any other contract (missing, malformed, of another schema or differing in
any field) is refused before anything runs (``CheckpointRefused``, exit 1), the file left
as it is. Otherwise the cells saved as finished are written into the run from their
records (``records.recorded_cell``, as ``assemble`` does) and every other cell is run
again from its first session with a fresh agent, its saved failed attempts written first
and counted against its attempts (so a kill between attempts neither launders what a
failed attempt did nor buys more attempts). The probe is run again. For an agent whose
decisions repeat (seed 002) the resumed run writes the trajectory and receipt body an
uninterrupted run writes. A resume never compares a cell run again with the attempt it
replaced: comparing runs is re-execution's (``verify --reexecute``).

Each save rewrites the whole file atomically (``write_atomically``), so a reader, or a
process killed at any instant, finds the state before a save or after it, never half.
The file stays when the run completes, every cell saved: the same command given again
writes the same trajectory and receipt, running only the probe. One process at a time
per file: the first save creates it exclusively, and nothing stops a second process
later from rewriting it (each save is a whole state of one run, so the last one wins).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from harness import canonical, outcomes
from harness.isolation.drivers import agent_process
from harness.isolation.guard import EgressAttempt
from harness.isolation.sandbox.outside import SandboxSettings
from harness.rundata.config import ConfigError
from harness.runs.cells import cell_with_retries
from harness.runs.inputs import Inputs, identity
from harness.runs.records import CellRecord, outcome_json
from harness.runs.retries import KEPT_FROM_FAILED_ATTEMPTS
from harness.runs.state import Aborted, CellOutcome, RunContext
from harness.tools.toolbox import ArmRows, ClockIndex, Toolbox
from harness.version import HARNESS_VERSION

SCHEMA = "pit-harness.checkpoint.v1"
PROBE = "probe"  # the label the probe's attempts carry (a cell's is "arm/clock")


class CheckpointRefused(Exception):
    """A checkpoint this run may not resume from (its contract differs, or what it saved
    is not what a run saves): nothing was run and the file is left as it is (exit 1)."""


class Contract(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """What must be the same for a run to go on from a checkpoint."""

    schema: str
    bundle_content_digest: str
    config_sha256: str
    fault_plan_sha256: str | None
    agent: str
    agent_sha256: str | None
    harness_version: str
    runtime_attempts: int
    cells: list[str]  # "arm/clock", in the order the runner walks them
    pass_env: list[str]  # the names only: values are never written anywhere
    sandbox_limits: dict[str, int | float]


class FailedAttempt(msgspec.Struct, tag="attempt", tag_field="kind", forbid_unknown_fields=True):
    """A failed attempt of a cell or the probe: its ledger entry (its ``cell`` is the
    label, ``attempt`` its number) and its kept events (each with its ``event``)."""

    entry: dict[str, Any]
    kept: list[dict[str, Any]]
    exited: bool  # the agent's own process exited (all attempts so: the cell is incomplete)


class FinishedCell(msgspec.Struct, tag="cell", tag_field="kind", forbid_unknown_fields=True):
    record: CellRecord


Saved = FailedAttempt | FinishedCell


class CheckpointFile(msgspec.Struct, forbid_unknown_fields=True):
    """The file: the contract, its digest, and what was saved in the order it happened."""

    contract: Contract
    contract_sha256: str
    saved: list[Saved]


def contract_for(
    inputs: Inputs, cells: list[tuple[str, str]], sandbox: SandboxSettings
) -> Contract:
    """This invocation's contract, made before anything starts (the agent's process is
    the one ``open_drivers`` will choose)."""
    started = identity(inputs, agent_process(inputs.spec, inputs.config))
    plan = started.config_body.get("fault_plan")
    return Contract(
        schema=SCHEMA,
        bundle_content_digest=inputs.bundle.content_digest,
        config_sha256=started.config_sha,
        fault_plan_sha256=plan.get("sha256") if isinstance(plan, dict) else None,
        agent=inputs.spec.name,
        agent_sha256=started.config_body["agent_source_sha256"],
        harness_version=HARNESS_VERSION,
        runtime_attempts=outcomes.RUNTIME_ATTEMPTS,
        cells=[f"{arm}/{clock}" for arm, clock in cells],
        pass_env=sorted(inputs.config.pass_env),
        sandbox_limits={**sandbox.limits(), "decision_timeout": sandbox.decision_timeout},
    )


def contract_digest(contract: Contract) -> str:
    return canonical.digest(msgspec.to_builtins(contract))


def write_atomically(path: Path, data: bytes, *, create: bool = False) -> None:
    """``data`` at ``path``, whole or not at all: written to an exclusively created
    sibling, flushed to disk, then moved over ``path`` (``create``: linked to it, which
    fails if ``path`` exists), and the folder flushed so the move itself survives a
    crash. A process killed at any point leaves the old file or the new one (and at
    worst a stray sibling named ``.<name>.*.tmp``)."""
    folder = path.parent
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if not create:
            os.replace(tmp, path)
        elif not _link(tmp, path):  # a filesystem without hard links: not exclusive then
            if path.exists():
                raise FileExistsError(f"{path} exists")
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _link(tmp: str, path: Path) -> bool:
    """``tmp`` linked at ``path`` (FileExistsError if there is a file) and let go of;
    False where the filesystem has no hard links."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        return False
    os.unlink(tmp)
    return True


def _differences(theirs: Contract, ours: Contract) -> str:
    fields = [
        f"{name} (the file's {_short(getattr(theirs, name))}, this run's "
        f"{_short(getattr(ours, name))})"
        for name in Contract.__struct_fields__
        if getattr(theirs, name) != getattr(ours, name)
    ]
    return "; ".join(fields)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 90 else text[:87] + "..."


def _refused(path: Path, why: str) -> CheckpointRefused:
    return CheckpointRefused(
        f"checkpoint {path}: {why}; nothing was run and the file is left as it is"
    )


def read_checkpoint(path: Path, ours: Contract) -> list[Saved]:
    """What ``path`` saved, if its contract is ``ours``; refused otherwise."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"checkpoint {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError:
        raise _refused(path, "contract differs: the file holds no contract (not JSON)") from None
    if not isinstance(raw, dict) or "contract" not in raw:
        raise _refused(path, "contract differs: the file holds no contract")
    stated = raw["contract"]
    if isinstance(stated, dict) and stated.get("schema") != SCHEMA:
        raise _refused(
            path,
            f"contract differs: schema {_short(stated.get('schema'))}, this harness "
            f"resumes {SCHEMA!r}",
        )
    try:
        theirs = msgspec.convert(stated, Contract)
    except msgspec.ValidationError as exc:
        raise _refused(path, f"contract differs: its contract is malformed ({exc})") from None
    if raw.get("contract_sha256") != contract_digest(theirs):
        raise _refused(path, "contract differs: its contract does not match its digest")
    if theirs != ours:
        raise _refused(path, f"contract differs: {_differences(theirs, ours)}")
    try:
        whole = msgspec.convert(raw, CheckpointFile)
    except msgspec.ValidationError as exc:
        raise _refused(path, f"what it saved is malformed ({exc})") from None
    problem = _saved_problem(whole.saved, ours)
    if problem is not None:
        raise _refused(path, f"what it saved is not what a run saves ({problem})")
    return whole.saved


def _saved_problem(saved: list[Saved], contract: Contract) -> str | None:
    cells = set(contract.cells)
    finished: set[str] = set()
    attempts: dict[str, int] = {}
    for item in saved:
        if isinstance(item, FinishedCell):
            record = item.record
            cell = f"{record.arm}/{record.clock}"
            if cell not in cells:
                return f"cell {cell} is not a cell of this run"
            if cell in finished:
                return f"cell {cell} is saved twice"
            if record.config_sha256 != contract.config_sha256:
                return f"cell {cell} was run under config {record.config_sha256}"
            finished.add(cell)
            continue
        label, number = item.entry.get("cell"), item.entry.get("attempt")
        if not isinstance(label, str) or (label not in cells and label != PROBE):
            return f"a failed attempt of {label!r}, not a cell of this run or its probe"
        if label in finished:
            return f"a failed attempt of {label} after the cell was saved as finished"
        attempts[label] = attempts.get(label, 0) + 1
        if number != attempts[label] or number > contract.runtime_attempts:
            return f"{label}'s failed attempt {number!r} is out of order"
        if any(e.get("event") not in KEPT_FROM_FAILED_ATTEMPTS for e in item.kept):
            return f"{label}'s failed attempt {number} keeps an event no attempt keeps"
    return None


class Checkpoint:
    """A run's checkpoint, open for one run: what it held when the run started, and
    every save the run makes (``RunContext.saved`` is this, for the attempts)."""

    def __init__(self, path: Path, contract: Contract, saved: list[Saved], exists: bool) -> None:
        self.path = path
        self.contract = contract
        self._saved = saved
        self._exists = exists
        self._head = (
            b'{"contract":'
            + msgspec.json.encode(contract)
            + b',"contract_sha256":'
            + msgspec.json.encode(contract_digest(contract))
            + b',"saved":['
        )
        self._encoded = [msgspec.json.encode(item) for item in saved]

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        inputs: Inputs,
        cells: list[tuple[str, str]],
        sandbox: SandboxSettings,
    ) -> Checkpoint:
        """The checkpoint at ``path`` for this invocation: new if there is no file, the
        file's progress if its contract is this invocation's, refused otherwise. Nothing
        is written here (the first save creates the file)."""
        file = Path(path)
        config = inputs.config
        if file.is_dir():
            raise ConfigError(f"checkpoint {file}: a folder; name the file to keep progress in")
        if file.exists() and not file.is_file():
            raise ConfigError(f"checkpoint {file}: not a regular file")
        if file.parent.exists() and not file.parent.is_dir():
            raise ConfigError(f"checkpoint {file}: {file.parent} is not a folder")
        real = os.path.realpath(file)
        for name, output in (
            ("the trajectory", config.trajectory_path),
            ("the trajectory's partial file", f"{config.trajectory_path}.partial"),
            ("the receipt", config.receipt_path),
        ):
            if real == os.path.realpath(output):
                raise ConfigError(f"checkpoint {file}: is {name}; give it a file of its own")
        if real.startswith(os.path.realpath(inputs.bundle.root) + os.sep):
            raise ConfigError(f"checkpoint {file}: lies in the release; keep it elsewhere")
        if file.parent.is_dir() and not os.access(file.parent, os.W_OK | os.X_OK):
            raise ConfigError(f"checkpoint {file}: its folder cannot be written")
        contract = contract_for(inputs, cells, sandbox)
        if not file.exists():
            return cls(file, contract, [], exists=False)
        return cls(file, contract, read_checkpoint(file, contract), exists=True)

    def finished(self) -> dict[tuple[str, str], CellRecord]:
        """The cells saved as finished, by cell: a resumed run writes them from these."""
        return {
            (item.record.arm, item.record.clock): item.record
            for item in self._saved
            if isinstance(item, FinishedCell)
        }

    def begin(self, config_sha: str) -> None:
        """The run has started (its identity written): a new checkpoint is created now,
        holding the contract and nothing saved yet."""
        if config_sha != self.contract.config_sha256:  # the agent's process changed since
            raise ConfigError(
                f"checkpoint {self.path}: the run started as config {config_sha}, its "
                f"contract says {self.contract.config_sha256}"
            )
        if self._exists:
            return
        try:
            write_atomically(self.path, self._data(), create=True)
        except FileExistsError:
            raise ConfigError(
                f"checkpoint {self.path}: appeared while this run started (another run is using it)"
            ) from None
        self._exists = True

    def _save(self, item: Saved) -> None:
        self._saved.append(item)
        self._encoded.append(msgspec.json.encode(item))
        write_atomically(self.path, self._data())

    def _data(self) -> bytes:
        return self._head + b",".join(self._encoded) + b"]}\n"

    # -- the attempts (``harness.runs.state.SavedAttempts``) --------------------------

    def replay(self, ctx: RunContext, label: str) -> tuple[int, int]:
        made = [
            item
            for item in self._saved
            if isinstance(item, FailedAttempt) and item.entry["cell"] == label
        ]
        for item in made:
            ctx.ledger.append(dict(item.entry))
            ctx.writer.write("attempt_failed", **item.entry)
            for event in item.kept:
                kind = str(event["event"])
                fields = {k: v for k, v in event.items() if k != "event"}
                ctx.writer.write(kind, **fields)
                # what ``RunContext.record_attempts`` counted while the attempt ran
                if kind == "network_attempt":
                    stack = tuple(fields["stack"])
                    ctx.egress.append(
                        EgressAttempt(fields["call"], fields["target"], fields["site"], stack)
                    )
                elif kind == "wire_attempt":
                    ctx.wire.append(fields)
                else:
                    endpoint = fields["endpoint"]
                    ctx.model_exchanges[endpoint] = ctx.model_exchanges.get(endpoint, 0) + 1
        return len(made), sum(item.exited for item in made)

    def failed(
        self, label: str, entry: dict[str, Any], kept: list[dict[str, Any]], exited: bool
    ) -> None:
        self._save(FailedAttempt(entry=entry, kept=kept, exited=exited))

    # -- a cell ----------------------------------------------------------------------

    def run_cell(
        self,
        ctx: RunContext,
        cells: dict[tuple[str, str], CellOutcome],
        arm: str,
        clock: str,
        index: ClockIndex,
        rows: ArmRows,
        served: dict[int, None],
    ) -> tuple[CellOutcome, Toolbox | None]:
        """The cell run as the runner runs it (``cell_with_retries``), and its record
        saved as it ends: what it wrote into the trajectory and added to the run's
        ledger, egress, wire, model exchanges and served rows. A cell the abort policy
        ended is saved too (a resumed run ends there again)."""
        start = ctx.writer.checkpoint()
        ledger, egress, wire = len(ctx.ledger), len(ctx.egress), len(ctx.wire)
        exchanges = dict(ctx.model_exchanges)
        known = len(served)
        aborted: str | None = None
        tools: Toolbox | None = None
        try:
            outcome, tools = cell_with_retries(ctx, cells, arm, clock, index, rows, served)
        except Aborted as exc:
            aborted, outcome = str(exc), cells[(arm, clock)]
        record = CellRecord(
            arm=arm,
            clock=clock,
            config_sha256=self.contract.config_sha256,
            events=_events_since(ctx, start[0]),
            outcome=outcome_json(outcome),
            ledger=ctx.ledger[ledger:],
            egress=[a.to_json() for a in ctx.egress[egress:]],
            wire=ctx.wire[wire:],
            model_exchanges={
                e: n - exchanges.get(e, 0)
                for e, n in ctx.model_exchanges.items()
                if n != exchanges.get(e, 0)
            },
            served=list(served)[known:],
            capabilities=ctx.drivers.capabilities(),
            aborted=aborted,
        )
        self._save(FinishedCell(record=record))
        if aborted is not None:
            raise Aborted(aborted)
        return outcome, tools


def _events_since(ctx: RunContext, offset: int) -> str:
    """The trajectory's lines from ``offset`` on, as a record holds them (no ``seq``)."""
    end = ctx.writer.checkpoint()[0]  # flushed: the file holds everything written
    with open(ctx.writer.partial_path, "rb") as handle:
        handle.seek(offset)
        text = handle.read(end - offset).decode()
    return "".join(
        canonical.line({k: v for k, v in json.loads(line).items() if k != "seq"}) + "\n"
        for line in text.splitlines()
    )
