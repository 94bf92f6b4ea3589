"""Writes on registered agents and execution jobs: every function is the only way its
rows change. Jobs and their cells move on the claimable-job machine::

    cell:  queued -> running -> done | harness_error     (running -> queued: ours, again)
    job:   cells -> queued          (the cell that completes the set: one conditional update)
           cells -> harness_error   (a cell that could not be run)
           queued -> assembling -> executed | reproduced | diverged | reexecution_failed
                                   | harness_error       (assembling -> queued: ours, again)

Imports go one way: tasks -> work -> services. A service reaches a task only through
``enqueue_cell`` and ``enqueue_assembly``, which send it by name on commit
(``pitweb.jobs.dispatch``), never importing it.
"""

from __future__ import annotations

import hashlib
import re
import socket
import urllib.parse
from datetime import date, timedelta
from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

import harness
from harness.agents.base import AgentSpec
from harness.agents.external import (
    AgentCommandError,
    command_agent,
    http_agent,
    public_addresses_only,
)
from harness.protocol import DIALECTS
from harness.rundata.config import RunConfig
from harness.rundata.faultplan import FaultPlan, FaultPlanError, parse_plan, plan_from_record
from harness.runs.runner import cell_order
from harness.vocabulary import ARMS, CLOCKS
from pitweb.artifacts import release_held, store_bytes
from pitweb.board.changes import board_changed
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import require_reason
from pitweb.execution.models import (
    ExecutionCell,
    ExecutionJob,
    ExecutionState,
    RegisteredAgent,
    cell_record_name,
)
from pitweb.jobs import machine
from pitweb.jobs.dispatch import send_on_commit
from pitweb.releases.models import Release
from pitweb.runs.models import JobState, Run, VerificationLevel

ISOLATION_UNAVAILABLE = "isolation unavailable on this worker"
AGENT_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


# -- registered agents ----------------------------------------------------------------------


def package_argv(name: str) -> list[str]:
    """The argv of an installed agent package, by name (``{examples}``: the examples
    folder installed with the site; ``{harness}``: the engine's package folder;
    ``{var}``: the site's own data folder)."""
    package = settings.PITWEB_AGENT_PACKAGES.get(name)
    if package is None:
        known = ", ".join(sorted(settings.PITWEB_AGENT_PACKAGES)) or "none"
        raise SubmissionError("unknown_package", f"no agent package {name!r} (installed: {known})")
    places = {
        "{examples}": str(settings.PITWEB_EXAMPLES_DIR),
        "{harness}": str(Path(harness.__file__).resolve().parent),
        "{var}": str(settings.VAR_DIR),
    }
    argv = cast(list[object], package["argv"])
    words = [str(word) for word in argv]
    for place, folder in places.items():
        words = [word.replace(place, folder) for word in words]
    return words


def _address_refusal(address: str) -> str | None:
    if settings.PITWEB_AGENT_PRIVATE_ADDRESSES:
        return None
    return public_addresses_only(address)


def check_endpoint(url: str) -> None:
    """An HTTP agent's endpoint the site may call: http(s), a host on the allowlist, and
    (unless settings allow private addresses) every address its name resolves to public.
    The transport checks again on every connect and follows no redirect."""
    parsed = urllib.parse.urlsplit(url)
    host = parsed.hostname or ""
    if parsed.scheme not in ("http", "https") or not host:
        raise SubmissionError("invalid_endpoint", "the endpoint must be an http(s) URL with a host")
    if host not in settings.PITWEB_AGENT_HOSTS:
        raise SubmissionError(
            "host_not_allowed",
            f"host {host!r} is not on the site's allowlist of agent hosts (PITWEB_AGENT_HOSTS)",
        )
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, ValueError) as exc:
        raise SubmissionError("unresolvable_endpoint", f"host {host!r}: {exc}") from None
    for *_, sockaddr in found:
        address = str(sockaddr[0])
        refused = _address_refusal(address)
        if refused is not None:
            raise SubmissionError(
                "private_address", f"host {host!r} resolves to {address}: {refused}"
            )


def agent_spec(agent: RegisteredAgent) -> AgentSpec:
    """The harness's spec of a registered agent, as a worker reaches it."""
    if agent.transport == RegisteredAgent.Transport.HTTP:
        policy = None if settings.PITWEB_AGENT_PRIVATE_ADDRESSES else public_addresses_only
        return http_agent(agent.url, dialect=agent.dialect, addresses=policy)
    package = settings.PITWEB_AGENT_PACKAGES.get(agent.package) or {}
    folders = cast(list[object], package.get("agent_dirs") or [])
    dirs = [str(d).replace("{examples}", str(settings.PITWEB_EXAMPLES_DIR)) for d in folders]
    return command_agent(package_argv(agent.package), dialect=agent.dialect, agent_dirs=dirs)


def agent_register(
    *,
    by: User,
    name: str,
    owner: User,
    package: str = "",
    url: str = "",
    dialect: str = "",
) -> RegisteredAgent:
    """Staff register an agent: a package installed on the workers, or an HTTP endpoint
    whose host is allowed. Its digest is computed here, as a receipt would state it."""
    if not by.is_staff:
        raise SubmissionError("staff_only", "only staff register agents", 403)
    if not (len(name) <= 100 and AGENT_NAME.fullmatch(name)):
        raise SubmissionError(
            "invalid_agent",
            "name: lower-case letters and digits in dash-separated words, at most 100",
        )
    if len(url) > 500:
        raise SubmissionError(
            "invalid_endpoint", "the endpoint's URL is longer than 500 characters"
        )
    if bool(package) == bool(url):
        raise SubmissionError("invalid_agent", "give exactly one of package or url")
    if package:
        package_argv(package)  # installed, or refused by name
        dialect = dialect or str(settings.PITWEB_AGENT_PACKAGES[package].get("dialect", "pit"))
    dialect = dialect or "pit"
    if dialect not in DIALECTS:
        raise SubmissionError("invalid_agent", f"dialect: one of {', '.join(DIALECTS)}")
    if url:
        check_endpoint(url)
    row = RegisteredAgent(
        name=name,
        owner=owner,
        transport=RegisteredAgent.Transport.STDIO if package else RegisteredAgent.Transport.HTTP,
        dialect=dialect,
        package=package,
        url=url.rstrip("/"),
        registered_by=by,
    )
    try:
        spec = agent_spec(row)
    except AgentCommandError as exc:
        raise SubmissionError("invalid_agent", str(exc)) from None
    assert spec.external is not None
    row.digest, row.label = spec.external.digest(), spec.name[:200]
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:
        raise SubmissionError(
            "agent_exists", f"an agent named {name!r} is registered", 409
        ) from None
    return row


def agent_of_run(run: Run) -> RegisteredAgent | None:
    """The registered agent an uploaded run's receipt names, by its digest."""
    digest = run.body.get("config", {}).get("agent_digest")
    if not digest:
        return None
    return RegisteredAgent.objects.filter(digest=digest).order_by("pk").first()


# -- requests -------------------------------------------------------------------------------


def _create(
    *,
    kind: str,
    agent: RegisteredAgent,
    release: Release,
    config: dict[str, Any],
    by: User,
    reason: str,
    checked: Run | None = None,
) -> ExecutionJob:
    cells = cell_order(RunConfig(**{k: config[k] for k in ("arms", "clocks")}))
    with transaction.atomic():
        job = ExecutionJob.objects.create(
            kind=kind, agent=agent, release=release, config=config, requested_by=by,
            reason=reason, checked=checked, state=ExecutionState.CELLS,
        )  # fmt: skip
        made = ExecutionCell.objects.bulk_create(
            ExecutionCell(job=job, position=n, arm=arm, clock=clock)
            for n, (arm, clock) in enumerate(cells)
        )
        for cell in made:
            enqueue_cell(cell.pk)
    return job


def release_forms(release: Release) -> list[str]:
    """The forms a release holds, from its manifest."""
    manifest = release.manifest
    forms = manifest.get("forms") or sorted((manifest.get("form_counts") or {}).keys())
    return sorted(str(f) for f in forms)


def execution_request(
    *,
    by: User,
    agent: RegisteredAgent,
    release: Release,
    start: date,
    end: date,
    forms: list[str] | None = None,
    probe: int = 10,
    model_version: str = "",
    training_cutoff: str = "",
    fault_plan: Any = None,
) -> ExecutionJob:
    """The agent's owner (or staff) asks for a run of it on a release and window: executed
    by the workers with the release's current reference prices. ``model_version`` and
    ``training_cutoff``: the owner's declarations (P1, P2), written into the run's config
    as declared; the cutoff is then checked against the window by the engine.
    ``fault_plan`` (staff only): the plan (``sharpebench.fault-plan.v1``, as parsed JSON)
    the agent runs under, refused by rule before anything is queued; its declaration is
    the operator's to publish to the agent's owner first."""
    if not (by.is_staff or agent.owner_id == by.pk):
        raise SubmissionError("not_owner", "only the agent's owner or staff ask for its runs", 403)
    plan = _fault_plan(by, fault_plan)
    if not release_held(release):
        raise SubmissionError("unknown_release", f"the server does not hold {release.name}", 409)
    first = date.fromisoformat(str(release.window_start))
    last = date.fromisoformat(str(release.window_end))
    if not (first <= start <= end <= last):
        raise SubmissionError(
            "invalid_window", f"the window must lie within the release ({first} to {last})"
        )
    held = release_forms(release)
    forms = sorted(set(forms or held))
    unknown = sorted(set(forms) - set(held))
    if unknown:
        raise SubmissionError("invalid_forms", f"forms not in the release: {unknown}")
    if not 0 <= probe <= 1000:
        raise SubmissionError("invalid_probe", "probe: an integer from 0 to 1000")
    declared = _declarations(model_version, training_cutoff)
    running = agent.jobs.filter(kind=ExecutionJob.Kind.EXECUTE).exclude(
        state__in=ExecutionJob.FINAL
    )
    if running.exists():
        raise SubmissionError(
            "job_in_progress", f"an execution of {agent.name} is still running: one at a time", 409
        )
    prices = release.reference_prices.order_by("-version").first()
    config = {
        "forms": forms,
        "start": start.isoformat(),
        "end": end.isoformat(),
        "arms": list(ARMS),
        "clocks": list(CLOCKS),
        "hold_sessions": 5,
        "probe": probe,
        "network_policy": "fail_closed",
        "prices_id": None if prices is None else prices.pk,
        **declared,
        **({} if plan is None else {"fault_plan": {"sha256": plan.sha256, **plan.record()}}),
    }
    return _create(kind=ExecutionJob.Kind.EXECUTE, agent=agent, release=release, config=config,
                   by=by, reason="")  # fmt: skip


def _fault_plan(by: User, given: Any) -> FaultPlan | None:
    """A staff member's fault plan, every rule checked; None when none was given."""
    if given in (None, "", {}):
        return None
    if not by.is_staff:
        raise SubmissionError("not_staff", "only staff run an agent under a fault plan", 403)
    if isinstance(given, str):
        try:
            return parse_plan(given.encode())
        except FaultPlanError as exc:
            raise SubmissionError("invalid_fault_plan", f"fault_plan: {exc}") from None
    try:
        return plan_from_record(given)
    except FaultPlanError as exc:
        raise SubmissionError("invalid_fault_plan", f"fault_plan: {exc}") from None


def _declarations(model_version: str, training_cutoff: str) -> dict[str, str]:
    """P1 and P2 as an owner declares them (absent when neither is: the run lists them
    as gaps); a cutoff that is not a date is refused."""
    if len(model_version) > 200:
        raise SubmissionError("invalid_model_version", "model_version: at most 200 characters")
    if training_cutoff:
        try:
            date.fromisoformat(training_cutoff)
        except ValueError:
            raise SubmissionError(
                "invalid_training_cutoff", "training_cutoff: a date, YYYY-MM-DD"
            ) from None
        if len(training_cutoff) != 10:
            raise SubmissionError("invalid_training_cutoff", "training_cutoff: a date, YYYY-MM-DD")
    found = {"model_version": model_version, "training_cutoff": training_cutoff}
    return {k: v for k, v in found.items() if v}


def forward_execution_queue(
    *,
    agent: RegisteredAgent,
    release: Release,
    start: date,
    end: date,
    forms: list[str],
    arms: list[str],
    clocks: list[str],
    hold_sessions: int,
    forward: dict[str, Any],
    reason: str,
    model_version: str = "",
    training_cutoff: str = "",
) -> ExecutionJob:
    """The forward track's execution of a committed agent (``forward``: the binding the
    run's config carries, ``harness.forward``): queued by the site's scheduler, not asked
    for by a person, so it is not held to one execution at a time; the commitment fixed
    everything else."""
    if not release_held(release):
        raise SubmissionError("unknown_release", f"the server does not hold {release.name}", 409)
    prices = release.reference_prices.order_by("-version").first()
    config = {
        "forms": sorted(forms),
        "start": start.isoformat(),
        "end": end.isoformat(),
        "arms": list(arms),
        "clocks": list(clocks),
        "hold_sessions": hold_sessions,
        "probe": 10,
        "network_policy": "fail_closed",
        "prices_id": None if prices is None else prices.pk,
        "forward": forward,
        # the commitment's declarations: its runs are post-cutoff, crossing or pre-cutoff
        **_declarations(model_version, training_cutoff),
    }
    return _create(kind=ExecutionJob.Kind.EXECUTE, agent=agent, release=release, config=config,
                   by=agent.owner, reason=reason)  # fmt: skip


def reexecution_request(*, by: User, run: Run, reason: str) -> ExecutionJob:
    """Staff have an uploaded run's agent run again by the workers, cell by cell, and its
    decisions compared with the recorded ones."""
    if not by.is_staff:
        raise SubmissionError("staff_only", "only staff ask for re-executions", 403)
    reason = require_reason(reason)
    agent = agent_of_run(run)
    if agent is None:
        raise SubmissionError(
            "agent_not_registered",
            "the run's agent is not registered here (no registered agent has its digest)",
            409,
        )
    config = run.body["config"]
    if run.status != JobState.VERIFIED:
        raise SubmissionError(
            "not_verified", "only a run whose arithmetic is verified is re-executed", 409
        )
    if config.get("agent_dialect", "pit") != agent.dialect:
        raise SubmissionError(
            "dialect_differs",
            f"the run's agent spoke {config.get('agent_dialect', 'pit')!r}, the registered "
            f"agent {agent.name} speaks {agent.dialect!r}",
            409,
        )
    if config.get("model_endpoints"):
        raise SubmissionError(
            "not_supported",
            "a run with model endpoints is re-executed with the CLI (pit-harness verify "
            "--reexecute replays its model calls); the workers do not replay them yet",
            409,
        )
    if run.release is None or not release_held(run.release):
        raise SubmissionError("unknown_release", "the server does not hold the run's release", 409)
    with transaction.atomic():
        Run.objects.select_for_update().filter(pk=run.pk).first()
        if run.reexecutions.exclude(state__in=ExecutionJob.FINAL).exists():
            raise SubmissionError("job_in_progress", "a re-execution of this run is running", 409)
        job = _create(kind=ExecutionJob.Kind.REEXECUTE, agent=agent, release=run.release,
                      config=dict(config), by=by, reason=reason, checked=run)  # fmt: skip
        audit_record(actor=by, action="reexecute", run=run, reason=f"{reason} (execution {job.pk})",
                     public=run.visibility == "public")  # fmt: skip
    return job


# -- cells ----------------------------------------------------------------------------------


CELL_TASK = "pitweb.execution.tasks.execution_cell_task"
ASSEMBLY_TASK = "pitweb.execution.tasks.execution_assembly_task"


def enqueue_cell(cell_id: int) -> None:
    send_on_commit(CELL_TASK, cell_id)


def enqueue_assembly(job_id: int) -> None:
    send_on_commit(ASSEMBLY_TASK, job_id)


def cell_claim(*, cell_id: int, worker: str) -> bool:
    """queued -> running, for exactly one worker, while its job still runs cells."""
    job_state = ExecutionCell.objects.filter(pk=cell_id).values_list("job__state", flat=True)
    if job_state.first() != ExecutionState.CELLS:
        return False
    return machine.claim(ExecutionCell, pk=cell_id, worker=worker)


def cell_done(*, cell_id: int, worker: str, record: bytes, status: str, sessions: int) -> bool:
    """running -> done with the cell's record, put into storage first (named by its
    digest, which the row keeps); the cell that completes the set moves its job on and
    queues its one assembly."""
    sha256 = "sha256:" + hashlib.sha256(record).hexdigest()
    store_bytes(cell_record_name(sha256), record)
    done = machine.finish(
        ExecutionCell, pk=cell_id, worker=worker, state=ExecutionCell.State.DONE,
        record_sha256=sha256, status=status[:16], sessions=sessions,
    )  # fmt: skip
    if done:
        _complete_set(ExecutionCell.objects.values_list("job_id", flat=True).get(pk=cell_id))
    return done


def cell_records(job: ExecutionJob) -> list[bytes]:
    """The job's cell records in the runner's order, read from storage, each checked
    against the digest its row holds (a record changed in storage is refused)."""
    records = []
    for cell in job.cells.order_by("position"):
        with default_storage.open(cell.record_name, "rb") as stored:
            data = stored.read()
        if "sha256:" + hashlib.sha256(data).hexdigest() != cell.record_sha256:
            raise ValueError(
                f"the record of cell {cell.label} in storage is not the one its worker stored "
                f"({cell.record_sha256})"
            )
        records.append(data)
    return records


def _complete_set(job_id: int) -> None:
    """Every cell done: cells -> queued, one conditional update (of two cells finishing
    together, exactly one moves the job; the later commit always sees both)."""
    open_cells = ExecutionCell.objects.filter(job=OuterRef("pk")).exclude(
        state=ExecutionCell.State.DONE
    )
    with transaction.atomic():
        moved = (
            ExecutionJob.objects.filter(pk=job_id, state=ExecutionState.CELLS)
            .filter(~Exists(open_cells))
            .update(state=ExecutionState.QUEUED)
        )
        if moved:
            enqueue_assembly(job_id)


def cell_failed(*, cell_id: int, worker: str, message: str, retry: bool = True) -> int | None:
    """Our failure in a cell: again while attempts remain (the seconds to wait are
    returned), else the cell and its job end harness_error. ``retry=False``: at once
    (a worker that cannot isolate the agent: another attempt here would be the same).
    A worker that no longer holds the cell (the sweep handed it on) changes nothing."""
    if retry:
        retry_in = machine.give_up_or_release(
            ExecutionCell, pk=cell_id, worker=worker, message=message
        )
        if retry_in is not None:
            return retry_in
        ended = ExecutionCell.objects.filter(
            pk=cell_id, state=ExecutionCell.State.HARNESS_ERROR, worker=worker
        ).exists()
    else:
        ended = machine.finish(
            ExecutionCell, pk=cell_id, worker=worker, state=ExecutionCell.State.HARNESS_ERROR,
            message=message[:2000],
        )  # fmt: skip
    if ended:
        cell = ExecutionCell.objects.get(pk=cell_id)
        _job_failed(cell.job_id, f"cell {cell.label}: {message}")
    return None


def _job_failed(job_id: int, message: str) -> None:
    """A cell could not be run: the job ends harness_error, and its cells still queued
    end with it (no worker will take them)."""
    with transaction.atomic():
        if machine.transition(
            ExecutionJob, pk=job_id, source=ExecutionState.CELLS,
            target=ExecutionState.HARNESS_ERROR, message=message[:2000], finished_at=timezone.now(),
        ):  # fmt: skip
            queued = ExecutionCell.objects.filter(job_id=job_id, state=ExecutionCell.State.QUEUED)
            for pk in queued.values_list("pk", flat=True):
                machine.transition(
                    ExecutionCell, pk=pk, source=ExecutionCell.State.QUEUED,
                    target=ExecutionCell.State.HARNESS_ERROR, finished_at=timezone.now(),
                    message="not run: its execution ended harness_error",
                )  # fmt: skip


# -- the assembly ---------------------------------------------------------------------------


def assembly_claim(*, job_id: int, worker: str) -> bool:
    return machine.claim(ExecutionJob, pk=job_id, worker=worker)


def assembly_finish(
    *,
    job_id: int,
    worker: str,
    state: str,
    message: str = "",
    made: Run | None = None,
    comparison: dict[str, Any] | None = None,
) -> bool:
    """assembling -> final. A re-execution that reproduced its run raises the run to
    ``reexecuted`` (while its arithmetic stays verified); one that diverged takes an
    upload's earlier re-execution back (the newest evidence decides). An execution's run
    is stored in the same transaction as this move (``made``)."""
    with transaction.atomic():
        done = machine.finish(
            ExecutionJob, pk=job_id, worker=worker, state=state, message=message[:2000],
            made=made, comparison=comparison,
        )  # fmt: skip
        checked = ExecutionJob.objects.values_list("checked_id", flat=True).get(pk=job_id)
        runs = Run.objects.filter(pk=checked or 0, executed=False)
        if done and state == ExecutionState.REPRODUCED:
            # a number shown is one proven: raised only while it is verified
            runs.filter(status=JobState.VERIFIED).update(
                verification_level=VerificationLevel.REEXECUTED
            )
            board_changed(runs=[checked] if checked else ())
        elif done and state in (ExecutionState.DIVERGED, ExecutionState.FAILED):
            runs.filter(verification_level=VerificationLevel.REEXECUTED).update(
                verification_level=VerificationLevel.HASHES_VERIFIED
            )
            board_changed(runs=[checked] if checked else ())
    return done


def assembly_retry(*, job_id: int, worker: str, message: str) -> int | None:
    return machine.give_up_or_release(ExecutionJob, pk=job_id, worker=worker, message=message)


def execution_requeue_stale(*, older_than: timedelta | None = None) -> list[int]:
    """The sweep: cells and assemblies whose worker stopped heart-beating are queued again
    and dispatched (a cell that keeps killing workers ends its job harness_error); a job
    whose last cell's worker died between recording it and moving the job on is moved on
    here, and one with a cell that ended harness_error is ended."""
    cells = machine.sweep_stale(ExecutionCell, older_than=older_than)
    for pk in cells.gave_up:
        cell = ExecutionCell.objects.get(pk=pk)
        _job_failed(cell.job_id, f"cell {cell.label}: {cell.message}")
    for pk in cells.to_dispatch:
        if ExecutionCell.objects.filter(pk=pk, job__state=ExecutionState.CELLS).exists():
            enqueue_cell(pk)
    # first: a set moved on below is dispatched there, not twice
    jobs = machine.sweep_stale(ExecutionJob, older_than=older_than)
    for pk in jobs.to_dispatch:
        enqueue_assembly(pk)
    waiting = ExecutionJob.objects.filter(
        state=ExecutionState.CELLS, created_at__lt=machine.stale_cutoff(older_than)
    )
    for job_id in waiting.values_list("pk", flat=True):
        failed = ExecutionCell.objects.filter(
            job_id=job_id, state=ExecutionCell.State.HARNESS_ERROR
        ).first()
        if failed is not None:
            _job_failed(job_id, f"cell {failed.label}: {failed.message}")
        else:
            _complete_set(job_id)
    return [*cells.requeued, *jobs.requeued]
