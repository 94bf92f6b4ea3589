"""The work behind the execution tasks: one cell (forked from the sandbox this worker
keeps, on whichever worker claims it), and the assembly (the run written as the CLI
writes it, then stored as a run or compared with the run it re-executes). What the agent
does is its own and lands in the run; what fails on our side is retried and then harness_error, never the
agent's result.

Imports go one way: the tasks import this work, this work imports the services (this
app's, and runs' intake for an executed run); no service imports it or a task."""

from __future__ import annotations

import atexit
import dataclasses
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction

from harness.agents.base import AgentSpec
from harness.isolation.sandbox.outside import availability
from harness.isolation.templates import Templates
from harness.market.prices import Prices, load_prices
from harness.rundata.config import RunConfig
from harness.runs.records import CellRecord
from harness.runs.reexecute import DIVERGED, FAILED, REPRODUCED, compare, rerun_config
from harness.runs.runner import assemble, run_cell
from pitweb.artifacts import copy_to, job_folder, release_copy
from pitweb.core.errors import SubmissionError
from pitweb.execution import services
from pitweb.execution.models import ExecutionCell, ExecutionJob, ExecutionState, RegisteredAgent
from pitweb.jobs import machine
from pitweb.jobs.machine import Outcome, retry_outcome
from pitweb.releases.models import ReferencePrices
from pitweb.runs import services as runs

log = logging.getLogger(__name__)

# This worker process's sandboxes, kept from one cell job to the next: a cell forks from a
# template already up instead of starting bubblewrap, an interpreter and the probes for
# itself (harness.isolation.templates says why nothing of an agent's crosses through it).
# A kept zygote dies with this process (bubblewrap's --die-with-parent).
TEMPLATES = Templates()
atexit.register(TEMPLATES.close)


@dataclass
class _Setup:
    spec: AgentSpec
    config: RunConfig
    prices: Prices | None


def _needs_sandbox(agent: RegisteredAgent) -> bool:
    return agent.transport == RegisteredAgent.Transport.STDIO


@contextmanager
def _setup(job: ExecutionJob, kind: str, label: object) -> Iterator[_Setup]:
    """The agent, the run config and the prices of ``job``, in a job folder of this
    worker's (removed however the work ends)."""
    with job_folder(kind, label) as work:
        release_dir = release_copy(job.release)
        spec = services.agent_spec(job.agent)
        if job.kind == ExecutionJob.Kind.REEXECUTE:
            assert job.checked is not None
            config = rerun_config(job.config, bundle=release_dir, agent=spec, folder=work)
            prices = None
        else:
            reference = (
                ReferencePrices.objects.filter(pk=job.config["prices_id"]).first()
                if job.config.get("prices_id")
                else None
            )
            prices = None
            priced: dict[str, str] | None = None
            if reference is not None:
                path = copy_to(reference.file_name, work / Path(reference.file_name).name)
                if kind == "assemble":  # a cell binds the prices, only the assembly prices
                    prices = load_prices(
                        path, source=reference.source, pulled_at=reference.pulled_at
                    )
                priced = {"path": str(path), "source": reference.source,
                          "pulled_at": reference.pulled_at}  # fmt: skip
            config = execution_config(
                job.config, spec=spec, bundle=release_dir, folder=work, prices=priced
            )
        yield _Setup(spec, dataclasses.replace(config, agent_process=_process(job.agent)), prices)


def _process(agent: RegisteredAgent) -> str:
    # a stdio agent runs in the sandbox or not at all; an HTTP agent is remote
    return "isolated" if _needs_sandbox(agent) else "auto"


def execution_config(
    fields: dict[str, Any],
    *,
    spec: AgentSpec,
    bundle: Path,
    folder: Path,
    prices: dict[str, str] | None,
) -> RunConfig:
    """The RunConfig of an execution: the job's stored fields, this worker's paths."""
    external = spec.external
    assert external is not None
    return RunConfig(
        bundle_path=str(bundle),
        forms=tuple(fields["forms"]),
        start=fields["start"],
        end=fields["end"],
        arms=tuple(fields["arms"]),
        clocks=tuple(fields["clocks"]),
        hold_sessions=fields["hold_sessions"],
        probe=fields["probe"],
        network_policy=fields["network_policy"],
        dialect=external.dialect,
        prices=prices,  # type: ignore[arg-type]
        # the forward track's binding (a commitment), absent from any other execution
        forward=fields.get("forward"),
        # the fault plan staff chose (or a re-executed run's), absent from any other
        fault_plan=fields.get("fault_plan"),
        model_version=fields.get("model_version", ""),
        training_cutoff=fields.get("training_cutoff", ""),
        trajectory_path=str(folder / "trajectory.jsonl"),
        receipt_path=str(folder / "receipt.json"),
    )


def _isolation_refused(agent: RegisteredAgent) -> str | None:
    if not _needs_sandbox(agent):
        return None
    available, why = availability()
    return None if available else f"{services.ISOLATION_UNAVAILABLE} ({why})"


def execute_cell(*, cell_id: int, worker: str) -> Outcome:
    """Run one cell and record it; the cell that completes the set queues the assembly."""
    if not services.cell_claim(cell_id=cell_id, worker=worker):
        return Outcome("not claimed")
    cell = ExecutionCell.objects.select_related("job", "job__agent", "job__release").get(pk=cell_id)
    job = cell.job
    refused = _isolation_refused(job.agent)
    if refused is not None:  # never without the sandbox; another try here is the same
        services.cell_failed(cell_id=cell_id, worker=worker, message=refused, retry=False)
        return Outcome(ExecutionCell.State.HARNESS_ERROR)
    try:
        with (
            machine.Heartbeat(ExecutionCell, cell_id, worker),
            _setup(job, "cell", cell_id) as setup,
        ):
            record = run_cell(
                setup.spec, setup.config, cell.arm, cell.clock, prices=setup.prices,
                templates=TEMPLATES,
            )  # fmt: skip
    except SoftTimeLimitExceeded:
        return _cell_failed(cell_id, worker, "the cell ran past the worker's time limit", False)
    except Exception as exc:  # ours: the agent's own failures are inside the record
        log.exception("execution cell %s failed", cell_id)
        return _cell_failed(cell_id, worker, f"cell error: {type(exc).__name__}: {exc}", True)
    services.cell_done(
        cell_id=cell_id, worker=worker, record=msgspec.json.encode(record),
        status=str(record.outcome["status"]), sessions=int(record.outcome["sessions"]),
    )  # fmt: skip
    return Outcome(ExecutionCell.State.DONE)


def _cell_failed(cell_id: int, worker: str, message: str, retry: bool) -> Outcome:
    retry_in = services.cell_failed(cell_id=cell_id, worker=worker, message=message, retry=retry)
    return retry_outcome(ExecutionCell, retry_in)


def assemble_job(*, job_id: int, worker: str) -> Outcome:
    """Join the cells into the run; store it (an execution) or compare it with the run it
    re-executes."""
    if not services.assembly_claim(job_id=job_id, worker=worker):
        return Outcome("not claimed")
    job = ExecutionJob.objects.select_related("agent", "release", "checked").get(pk=job_id)
    refused = _isolation_refused(job.agent)  # the probe runs the agent here
    if refused is not None:
        return _assembly_failed(job_id, worker, refused)
    try:
        with (
            machine.Heartbeat(ExecutionJob, job_id, worker),
            _setup(job, "assemble", job_id) as setup,
        ):
            records = [
                msgspec.json.decode(data, type=CellRecord) for data in services.cell_records(job)
            ]
            if job.kind == ExecutionJob.Kind.REEXECUTE:
                return _compared(job, worker, setup, records)
            result = assemble(
                setup.spec, setup.config, records, prices=setup.prices, templates=TEMPLATES
            )
            with transaction.atomic():  # stored and linked together, or neither
                made = _store(job, result.receipt_path, result.trajectory_path, setup)
                if not services.assembly_finish(
                    job_id=job_id, worker=worker, state=ExecutionState.EXECUTED, made=made
                ):
                    raise _LostClaim
    except _LostClaim:  # the sweep gave the assembly to another worker: its run counts
        return Outcome("not claimed")
    except SubmissionError as exc:  # intake refused the run: final, said as it said it
        message = f"the executed run was refused at intake ({exc.code}): {exc.message}"
        services.assembly_finish(
            job_id=job_id, worker=worker, state=ExecutionState.HARNESS_ERROR, message=message
        )
        return Outcome(ExecutionState.HARNESS_ERROR)
    except Exception as exc:  # ours
        log.exception("execution assembly %s failed", job_id)
        return _assembly_failed(job_id, worker, f"assembly error: {type(exc).__name__}: {exc}")
    return Outcome(ExecutionState.EXECUTED)


class _LostClaim(Exception):
    """This worker no longer holds the assembly: what it stored is rolled back."""


def _assembly_failed(job_id: int, worker: str, message: str) -> Outcome:
    retry_in = services.assembly_retry(job_id=job_id, worker=worker, message=message)
    return retry_outcome(ExecutionJob, retry_in)


def _store(job: ExecutionJob, receipt: Path, trajectory: Path, setup: _Setup) -> Any:
    """The executed run, stored through the same intake as an upload (checked whole,
    verified by the verification job like any other), marked as executed here."""
    prices_path = setup.config.prices.path if setup.config.prices is not None else None
    with open(receipt, "rb") as r, open(trajectory, "rb") as t:
        prices = open(prices_path, "rb") if prices_path else None  # noqa: SIM115
        try:
            submission = runs.run_submit(
                user=job.agent.owner,  # the owner's run, whoever asked: its family counts it
                receipt=r,
                trajectory=t,
                prices=prices,
                executed=True,
            )
        finally:
            if prices is not None:
                prices.close()
    return submission.run


def _compared(job: ExecutionJob, worker: str, setup: _Setup, records: list[CellRecord]) -> Outcome:
    """The re-executed run's decisions beside the recorded ones, step by step."""
    assert job.checked is not None
    result = assemble(setup.spec, setup.config, records, templates=TEMPLATES)
    work = Path(setup.config.trajectory_path).parent
    recorded = copy_to(job.checked.trajectory_name, work / "recorded.jsonl")
    comparison = compare(recorded, result.trajectory_path)
    comparison.agent = setup.spec.name
    comparison.agent_digest_recorded = job.checked.body["config"].get("agent_digest")
    comparison.agent_digest_reexecuted = result.body["config"].get("agent_digest")
    if comparison.agent_digest_recorded != comparison.agent_digest_reexecuted:
        # the workers' copy of the package is not the agent recorded: nothing is proven
        comparison.failure = (
            "the agent the workers ran is not the one recorded (its digest differs): "
            f"{comparison.result} proves nothing about the recorded run"
        )
        comparison.result = FAILED
    state = {
        REPRODUCED: ExecutionState.REPRODUCED,
        DIVERGED: ExecutionState.DIVERGED,
        FAILED: ExecutionState.FAILED,
    }[comparison.result]
    body = comparison.to_json()
    services.assembly_finish(job_id=job.pk, worker=worker, state=state, comparison=body)
    return Outcome(state)
