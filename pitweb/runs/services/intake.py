"""Intake: an upload checked completely, then stored, then its verification queued.
Nothing is written before every check has passed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import jsonschema
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from msgspec import UnsetType

from harness import canonical
from harness.receipt.binding import config_binding
from harness.receipt.build import ReceiptError
from harness.receipt.model import BodyError, ReceiptBody, body_from_dict
from harness.receipt.schemas import receipt_body_validator
from harness.receipt.verify import check_receipt
from harness.rundata.benchmark import Benchmark as BenchmarkOf
from pitweb.artifacts import job_folder, spool
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import read_json
from pitweb.releases.models import Release
from pitweb.runs.models import Benchmark, Family, Run, VerificationJob
from pitweb.runs.services.benchmarks import benchmark_record
from pitweb.runs.services.verifying import verification_request
from pitweb.runs.summary import body_summary, cutoff_facts, run_facts


@dataclass
class Submission:
    run: Run
    job: VerificationJob | None
    created: bool


@dataclass(frozen=True)
class _NewRun:
    """An upload that passed every check, its files stored: what its row is made of."""

    user: User
    body: dict[str, Any]
    receipt: ReceiptBody
    body_sha: str
    release: Release
    config: Any
    trajectory_name: str
    receipt_name: str
    prices_name: str
    is_baseline: bool
    executed: bool


def _stored_sha(name: str) -> str:
    with default_storage.open(name, "rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def _store(local: Path, name: str, sha: str | None = None) -> str:
    """Content-addressed: the same bytes always land on the same name, once. A file
    already there under the name but with other bytes (damaged) is replaced."""
    if sha is not None and default_storage.exists(name) and _stored_sha(name) != sha:
        default_storage.delete(name)
    if not default_storage.exists(name):
        with open(local, "rb") as handle:
            saved = default_storage.save(name, File(handle))
        if saved != name:  # a concurrent writer stored the same bytes first
            default_storage.delete(saved)
    return name


def run_submit(
    *,
    user: User,
    receipt: IO[bytes],
    trajectory: IO[bytes],
    config: IO[bytes] | None = None,
    prices: IO[bytes] | None = None,
    is_baseline: bool = False,
    executed: bool = False,
) -> Submission:
    """Check an upload completely, then store it and queue its verification.
    ``executed``: the site ran it itself (``pitweb.execution``), through this same intake.

    The steps, in order: the receipt and its body; the submitter's own earlier
    submissions (the same body again is that submission; the same run_id with another
    body is a conflict); the release; the trajectory; the config; the prices. Nothing is
    written before every check has passed, and files stored for a row that could not be
    created are removed again.
    """
    receipt_bytes = _read_limited(receipt, settings.PITWEB_MAX_RECEIPT_BYTES, "receipt")
    read_json(receipt_bytes, "receipt")
    with job_folder("upload", "run") as tmp:
        receipt_path = tmp / "receipt.json"
        receipt_path.write_bytes(receipt_bytes)
        body, typed, body_sha = _checked_receipt(receipt_path)
        known = _known_submission(user, typed, body_sha)
        if known is not None:
            return known
        release = _held_release(typed)
        spooled: list[Path] = []
        try:
            trajectory_path, trajectory_sha = _checked_trajectory(trajectory, body, typed, spooled)
            config_value = _checked_config(config, body)
            priced = _checked_prices(prices, typed, spooled)
            stored = _Stored()
            new = _NewRun(
                user=user,
                body=body,
                receipt=typed,
                body_sha=body_sha,
                release=release,
                config=config_value,
                trajectory_name=stored.put(
                    trajectory_path, f"trajectories/{_hex(trajectory_sha)}.jsonl", trajectory_sha
                ),
                receipt_name=stored.put(receipt_path, f"receipts/{_hex(body_sha)}.json"),
                prices_name=stored.put(priced[0], f"prices/{_hex(priced[1])}.csv", priced[1])
                if priced
                else "",
                is_baseline=is_baseline,
                executed=executed,
            )
            try:
                return _create_run(new=new)
            except BaseException:
                stored.remove_new()
                raise
        finally:
            for path in spooled:
                path.unlink(missing_ok=True)


def _hex(sha: str) -> str:
    return sha.removeprefix("sha256:")


def _read_limited(upload: IO[bytes], limit: int, what: str) -> bytes:
    data = upload.read(limit + 1)
    if len(data) > limit:
        raise SubmissionError("too_large", f"{what} is larger than {limit} bytes", 413)
    return data


def _checked_receipt(path: Path) -> tuple[dict[str, Any], ReceiptBody, str]:
    """The receipt's body (as stored, and decoded once into its types), once its
    layout, schema, config binding and hash hold."""
    try:
        report, body = check_receipt(path)
    except (ReceiptError, canonical.CanonicalError) as exc:
        raise SubmissionError("invalid_receipt", str(exc)) from None
    typed = _check_body(body)  # first: a malformed body is named as such, not as a hash failure
    if not report.ok:
        raise SubmissionError("receipt_hash_mismatch", "; ".join(report.failures))
    return body, typed, canonical.digest(body)


def _known_submission(user: User, receipt: ReceiptBody, body_sha: str) -> Submission | None:
    """The submitter's own submission of this body, or None; a conflict with their own
    other body under the same run_id is refused. Another submitter's runs are never
    consulted: an identical body from someone else is a submission of its own, so nobody
    can squat a run_id or learn that a run exists."""
    existing = Run.objects.filter(body_sha256=body_sha, submitter=user).first()
    if existing is not None:
        return Submission(existing, existing.jobs.first(), False)
    clash = (
        Run.objects.filter(run_id=receipt.run_id, submitter=user)
        .exclude(body_sha256=body_sha)
        .first()
    )
    if clash is not None:
        raise SubmissionError(
            "run_id_conflict",
            f"you already submitted run {receipt.run_id} with another receipt body "
            f"({clash.body_sha256}); the same configuration must give the same body",
            409,
        )
    return None


def _held_release(receipt: ReceiptBody) -> Release:
    digest = receipt.binding.bundle_content_digest
    release = Release.objects.filter(content_digest=digest).first()
    if release is None:
        raise SubmissionError(
            "unknown_release",
            f"release {digest} is not held by this server; ask staff to register it",
            422,
        )
    return release


def _checked_trajectory(
    trajectory: IO[bytes], body: dict[str, Any], receipt: ReceiptBody, spooled: list[Path]
) -> tuple[Path, str]:
    """The trajectory spooled to disk, once it is the one the receipt binds and its
    run_start config is the receipt's."""
    path, sha, _ = spool(trajectory, settings.PITWEB_MAX_TRAJECTORY_BYTES, "trajectory")
    spooled.append(path)
    bound = receipt.binding.trajectory_sha256
    if sha != bound:
        raise SubmissionError(
            "trajectory_mismatch", f"trajectory hashes to {sha}, the receipt binds {bound}"
        )
    with open(path, "rb") as handle:
        first = read_json(handle.readline(), "trajectory's first line")
    started = first.get("config") if isinstance(first, dict) else None
    if any(check == "config_sha256" for check, _ in config_binding(body, started)):
        raise SubmissionError(
            "config_mismatch",
            "the trajectory's run_start config does not hash to the receipt's config_sha256",
        )
    return path, sha


def _checked_config(config: IO[bytes] | None, body: dict[str, Any]) -> Any:
    """The config sent, which must be the receipt's own (or none)."""
    if config is None:
        return None
    raw = _read_limited(config, settings.PITWEB_MAX_CONFIG_BYTES, "config")
    value = read_json(raw, "config")
    if value != body["config"]:
        raise SubmissionError(
            "config_mismatch",
            "the config sent is not the receipt's config (send the receipt's config, or none)",
        )
    return value


def _checked_prices(
    prices: IO[bytes] | None, receipt: ReceiptBody, spooled: list[Path]
) -> tuple[Path, str] | None:
    """The price file, required exactly when the receipt states one, and the stated one."""
    stated = receipt.protocol.p4.prices
    if stated and prices is None:
        raise SubmissionError(
            "prices_required",
            "the run was priced: send its price file (field 'prices') so the scores can be "
            "re-derived",
        )
    if prices is None:
        return None
    path, sha, _ = spool(prices, settings.PITWEB_MAX_TRAJECTORY_BYTES, "prices")
    spooled.append(path)
    if not stated:
        raise SubmissionError(
            "unexpected_prices", "the receipt states no prices, but a price file was sent"
        )
    if sha != stated.file_sha256:
        raise SubmissionError(
            "prices_mismatch",
            f"price file is {sha}, the receipt states {stated.file_sha256}",
        )
    return path, sha


class _Stored:
    """Files put into storage for one submission, so that the ones it added can be
    removed again if its row is not created."""

    def __init__(self) -> None:
        self.new: list[str] = []

    def put(self, local: Path, name: str, sha: str | None = None) -> str:
        existed = default_storage.exists(name)
        _store(local, name, sha)
        if not existed:
            self.new.append(name)
        return name

    def remove_new(self) -> None:
        for name in self.new:
            if not Run.objects.filter(
                Q(receipt_name=name) | Q(trajectory_name=name) | Q(prices_name=name)
            ).exists():
                default_storage.delete(name)


_VALIDATOR = receipt_body_validator()


def _nul_in(value: Any) -> str | None:
    """The path of the first string (or key) holding a NUL character, if any."""
    stack: list[tuple[str, Any]] = [("body", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str) and "\x00" in item:
            return path
        if isinstance(item, dict):
            for key, child in item.items():
                if "\x00" in key:
                    return path
                stack.append((f"{path}/{key}", child))
        elif isinstance(item, list):
            stack.extend((f"{path}/{n}", child) for n, child in enumerate(item))
    return None


def _check_body(body: dict[str, Any]) -> ReceiptBody:
    """What the site reads of a receipt body, checked before anything is stored; the
    body decoded into its types, the form every later step reads."""
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(body))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "body"
        raise SubmissionError("invalid_receipt", f"receipt {where}: {error.message}")
    holding_nul = _nul_in(body)
    if holding_nul is not None:
        raise SubmissionError(
            "unreadable_input",
            f"receipt {holding_nul}: a string holds a NUL character, which the site cannot store",
        )
    try:
        typed = body_from_dict(body)
    except BodyError as exc:
        raise SubmissionError("invalid_receipt", str(exc)) from None
    cells = [(c.arm, c.clock) for c in typed.cells]
    if len(set(cells)) != len(cells):
        raise SubmissionError("invalid_receipt", "receipt cells: an (arm, clock) appears twice")
    if config_binding(body):
        raise SubmissionError(
            "config_mismatch", "the receipt's config does not hash to its own config_sha256"
        )
    return typed


def _create_run(*, new: _NewRun) -> Submission:
    try:
        return _insert_run(new)
    except IntegrityError:  # the same body arrived twice at once: one row won
        existing = Run.objects.get(body_sha256=new.body_sha, submitter=new.user)
        return Submission(existing, existing.jobs.first(), False)


def _counted_attempt(user: User, agent: str, benchmark: Benchmark) -> Family:
    """The family this upload is an attempt of on its benchmark, its count raised by one
    (in the caller's transaction: an upload that is not stored is not counted; nothing
    ever lowers it)."""
    family, _ = Family.objects.get_or_create(
        submitter=user, agent=agent, benchmark=benchmark,
        defaults={
            "release_digest": benchmark.release_digest,
            "window_start": benchmark.window_start, "window_end": benchmark.window_end,
        },
    )  # fmt: skip
    Family.objects.filter(pk=family.pk).update(attempts=F("attempts") + 1, last_at=timezone.now())
    family.refresh_from_db(fields=["attempts"])
    return family


def _insert_run(new: _NewRun) -> Submission:
    receipt, release, user = new.receipt, new.release, new.user
    cfg, summary = receipt.config, body_summary(receipt)
    of = BenchmarkOf.of(
        release_digest=release.content_digest, forms=cfg.forms, start=cfg.start,
        end=cfg.end, hold_sessions=cfg.hold_sessions, clocks=cfg.clocks,
        fault_plan=None if isinstance(cfg.fault_plan, UnsetType) else cfg.fault_plan.sha256,
    )  # fmt: skip
    with transaction.atomic():
        benchmark = benchmark_record(of=of)
        family = _counted_attempt(user, cfg.agent, benchmark)
        run = Run.objects.create(
            family=family,
            benchmark=benchmark,
            run_id=receipt.run_id,
            body_sha256=new.body_sha,
            body=new.body,
            config=new.config,
            release_digest=release.content_digest,
            release=release,
            submitter=user,
            is_baseline=new.is_baseline,
            executed=new.executed,
            valid=receipt.valid,
            protocol_complete=receipt.protocol_complete,
            model_version=cfg.model_version,
            agent=cfg.agent,
            forms=",".join(cfg.forms),
            window_start=cfg.start,
            window_end=cfg.end,
            pit_main_return=summary["main_pit"],
            summary=summary,
            **run_facts(receipt),
            **cutoff_facts(receipt),
            trajectory_sha256=receipt.binding.trajectory_sha256,
            trajectory_name=new.trajectory_name,
            receipt_name=new.receipt_name,
            prices_name=new.prices_name,
        )
        job = verification_request(
            run=run, kind=VerificationJob.Kind.VERIFY, requested_by=user, reason="submitted"
        )
    return Submission(run, job, True)
