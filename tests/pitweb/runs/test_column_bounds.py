"""Every string a receipt body puts in a bounded column is bounded by the receipt schema
at or below that column, so an upload too long for a column is refused as a 400 that
names the field, before anything is stored (Postgres would raise a 500 on it, SQLite
would store it as is). A body string with no bound that is right goes to a text column."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import models

from harness import canonical
from harness.receipt.model import decode_body
from harness.receipt.schemas import leaf_paths, receipt_body_schema
from harness.vocabulary import ARMS, CLOCKS
from pitweb.runs.models import Run
from pitweb.runs.summary import BODY_COLUMNS, ERROR_STATUSES, run_facts
from tests.pitweb.conftest import Artifacts, make_run, token_client
from tests.pitweb.runs.test_hostile_uploads import (  # noqa: F401 - a fixture of that module
    _form,
    _sealed,
    nothing_stored,
    stored,
    upload_tmp,
)
from tests.support.golden import GOLDEN

pytestmark = pytest.mark.django_db(transaction=True)

# The bounded columns no receipt body feeds, and where their strings come from.
NOT_FROM_A_BODY = {
    "board.BoardEntry.run_code": "a copy of its run's run_id, a column of the same width",
    "board.StoredBoard.key": "the site's sha256 of the board's filters (64 hex)",
    "board.Snapshot.content_digest": "the site's sha256 over the snapshot's row digests",
    "board.Snapshot.filters_key": "the site's JSON of the board's filters, refused past its "
    "column by the service",
    "board.Snapshot.previous_digest": "the content digest of the board's snapshot before it, "
    "from its own column",
    "certificates.Certificate.certificate_id": "the site's sha256 of the statement it signed",
    "certificates.Certificate.claims": "the site's sha256 of what a certificate says",
    "certificates.Certificate.keyid": "the sha256 (64 hex) of the site's own public key",
    "points.PointSet.name": "staff, a kebab-case name the upload form checks against its column",
    "points.PointSet.title": "staff, cut to the column by the upload form",
    "points.PointSet.state": "a choice of the upload form, moved by the reveal",
    "points.PointSet.kind": "the site's choice: fixed files, or a live-shadow cohort's plan",
    "points.AnswerSet.timing": "the site's reading of its set's state when it was received",
    "points.PitfallArtifact.digest": "the engine's payload digest of the artifact (64 hex)",
    "points.PitfallArtifact.artifact_type": "one of the six types the engine reads, or refused",
    "points.PointSet.suite_sha256": "the engine's suite digest (64 hex)",
    "points.PointSet.question_digest": "the engine's digest of the Questions",
    "points.PointSet.salt": "made by the site (64 hex)",
    "points.PointSet.commitment": "the engine's commitment over the hidden sections",
    "points.Point.question_sha256": "the engine's hash of a Question (64 hex)",
    "points.Point.point_sha256": "the engine's hash of a point file (64 hex)",
    "points.Point.ground_truth_sha256": "the engine's hash of a Ground Truth (64 hex)",
    "points.AnswerSet.sha256": "the engine's digest of an answer set",
    "points.AnswerSet.origin": "a choice the service makes",
    "points.JudgedSet.origin": "a choice the service makes",
    "points.JudgedSet.status": "a choice the service makes (the gates' verdict)",
    "points.Verdict.judged_class": "one of the six classes the engine parsed, or empty",
    "points.Verdict.outcome": "the engine's PASS, FAIL or HARNESS_ERROR",
    "points.ModelEndpoint.name": "staff, a kebab-case name the service checks against its column",
    "points.ModelEndpoint.api_key_env": "staff, a variable name the service bounds",
    "points.PointsJob.kind": "the site's choices",
    "points.PointsJob.state": "the site's choices",
    "points.PointsJob.worker": "the worker's own name",
    "execution.RegisteredAgent.name": "staff, a kebab-case name the service checks against its column",
    "execution.RegisteredAgent.transport": "a choice the service makes",
    "execution.RegisteredAgent.dialect": "one of the engine's dialects, checked by the service",
    "execution.RegisteredAgent.package": "an installed package's name, checked against the list",
    "execution.RegisteredAgent.url": "staff, bounded by the service",
    "execution.RegisteredAgent.digest": "the engine's agent digest (sha256)",
    "execution.RegisteredAgent.label": "the engine's name of the agent, cut to the column",
    "execution.ExecutionJob.kind": "the site's choices",
    "execution.ExecutionJob.state": "the site's choices",
    "execution.ExecutionJob.worker": "the worker's own name",
    "execution.ExecutionCell.arm": "an arm of the engine's vocabulary",
    "execution.ExecutionCell.clock": "a clock of the engine's vocabulary",
    "execution.ExecutionCell.state": "the site's choices",
    "execution.ExecutionCell.status": "a cell status of the engine's, cut to the column",
    "execution.ExecutionCell.worker": "the worker's own name",
    "execution.ExecutionCell.record_sha256": "the site's own digest of the record it stored",
    "accounts.ApiToken.key_hash": "the site's hash of a token it issued",
    "accounts.ApiToken.prefix": "the first characters of a token the site issued",
    "accounts.ApiToken.name": "the submitter, bounded by the token form",
    "accounts.Invitation.key_hash": "the site's hash of an invitation it made",
    "accounts.Invitation.prefix": "the first characters of an invitation the site made",
    "accounts.Invitation.note": "staff, bounded by the invitation form and command",
    "runs.Benchmark.key": "the engine's benchmark key (32 hex)",
    "runs.Benchmark.release_digest": "a copy of its run's release_digest, a column of the same width",
    "releases.Release.archive_sha256": "the site's hash of the release's archive",
    "releases.Release.content_digest": "the site's digest of a bundle staff register",
    "releases.Release.storage_prefix": "made by the site from the digest",
    "releases.ReferencePrices.source": "staff, bounded by the staff API's serializer",
    "releases.ReferencePrices.pulled_at": "staff, bounded by the staff API's serializer",
    "releases.ReferencePrices.file_sha256": "the site's hash of the price file",
    "releases.ReferencePrices.file_name": "made by the site from the hash",
    "releases.ReferencePrices.basis": "read off the price file by the harness (open or close)",
    "releases.ReferencePrices.index_symbol": "staff, bounded by the service (and the API)",
    "releases.ReferencePrices.index_source": "staff, bounded by the service (and the API)",
    "releases.ReferencePrices.index_pulled_at": "staff, bounded by the service (and the API)",
    "releases.ReferencePrices.index_sha256": "the site's hash of the index file",
    "releases.ReferencePrices.index_name": "made by the site from the hash",
    "pricing.RateCard.sha256": "the site's hash of the card",
    "pricing.RateCard.source": "the card's source, bounded at 2000 by the card's own type",
    "pricing.RateCard.as_of": "the card's as_of, an ISO date by the card's own type",
    "runs.Run.body_sha256": "the site's hash of the body",
    "runs.Run.visibility": "a choice of the upload form",
    "runs.Run.flag": "staff, cut to the column by the service",
    "runs.Run.failed_check": "the name of one of the verifier's checks",
    "runs.Run.verification_level": "the site's choices",
    "runs.Run.status": "the latest job's state",
    "runs.Run.trajectory_name": "made by the site from a hash",
    "runs.Run.receipt_name": "made by the site from a hash",
    "runs.Run.prices_name": "made by the site from a hash",
    "runs.Run.agent_digest": "the body's .config.agent_digest, which the schema's sha256 "
    "pattern holds to exactly 71 characters (a pattern is not read as a bound here)",
    "runs.Run.cutoff_relation": "the site's choices, read off the body's P2 check",
    "pricing.PlatformScore.state": "the site's choices",
    "pricing.PlatformScore.worker": "the worker's own name",
    "runs.VerificationJob.kind": "the site's choices",
    "runs.VerificationJob.state": "the site's choices",
    "runs.VerificationJob.worker": "the worker's own name",
    "runs.VerificationJob.mismatch_check": "the name of one of the verifier's checks",
    "runs.ReasoningAudit.digest": "the engine's digest of the audit it made (sha256)",
    "runs.ReasoningAudit.artifact_sha256": "the site's hash of the audit's stored file",
    "runs.ReasoningAudit.artifact_name": "made by the site from the audit's digest",
    "core.AuditEvent.action": "the site's names of staff actions",
    "core.GeneratedSigningKey.slot": "the one slot the site names",
    "core.GeneratedSigningKey.valid_from": "the site's own ISO 8601 stamp of when it made the key",
    "jobs.WorkerBeat.name": "the worker's own name",
    "jobs.WorkerBeat.isolation_unavailable": "the worker's probe, cut to the column",
    "forward.LogEntry.digest": "the engine's digest of an entry (sha256)",
    "forward.LogEntry.prev": "the previous entry's digest (sha256)",
    "forward.LogEntry.kind": "the site's choices",
    "forward.Commitment.agent_digest": "the engine's agent digest (sha256)",
    "forward.Commitment.model_version": "the submitter's, bounded by the log entry's type",
    "forward.Commitment.training_cutoff": "a date the service checks (YYYY-MM-DD)",
    "forward.ForwardRun.kind": "the site's choices",
    "forward.ForwardRun.status": "the site's choices",
}


def bounded_columns() -> dict[str, int]:
    """Every bounded character column of the site's own models, by ``app.Model.field``."""
    return {
        f"{model._meta.app_label}.{model.__name__}.{field.name}": field.max_length
        for model in apps.get_models()
        if model.__module__.startswith("pitweb.")
        for field in model._meta.get_fields()
        if isinstance(field, models.CharField) and field.max_length
    }


def schema_node(path: str) -> dict[str, Any]:
    """The schema node a leaf path (``.cells[].status``) names."""
    node = receipt_body_schema()
    for step in re.findall(r"\.\*|\[\]|\.[^.\[]+", path):
        if step == "[]":
            node = node["items"]
        elif step == ".*":
            node = node["additionalProperties"]
        else:
            node = node["properties"][step[1:]]
    return node


def schema_bound(node: dict[str, Any]) -> int | None:
    """The longest string a schema node lets through, or None when nothing bounds it (a
    pattern is not taken as a bound: a reader should not have to work one out)."""
    words = node["enum"] if "enum" in node else [node["const"]] if "const" in node else None
    if words is not None:
        return max(len(w) for w in words) if all(isinstance(w, str) for w in words) else None
    bound = node.get("maxLength")
    return bound if isinstance(bound, int) else None


def test_every_bounded_column_is_fed_by_a_body_or_named_as_not() -> None:
    columns = set(bounded_columns())
    assert not set(BODY_COLUMNS) & set(NOT_FROM_A_BODY), "a column is in both tables"
    unnamed = columns - set(BODY_COLUMNS) - set(NOT_FROM_A_BODY)
    assert unnamed == set(), f"bounded columns fed by nobody knows what: {sorted(unnamed)}"
    gone = (set(BODY_COLUMNS) | set(NOT_FROM_A_BODY)) - columns
    assert gone == set(), f"named columns that are not bounded columns: {sorted(gone)}"


def test_every_body_string_in_a_bounded_column_is_bounded_at_or_below_it() -> None:
    columns = bounded_columns()
    leaves = set(leaf_paths(receipt_body_schema()))
    wrong = []
    for column, paths in BODY_COLUMNS.items():
        for path in paths:
            assert path in leaves, f"{column}: {path} is not a leaf of the receipt schema"
            bound = schema_bound(schema_node(path))
            if bound is None:
                wrong.append(f"{column} ({columns[column]}) is fed by {path}, which is unbounded")
            elif len(paths) == 1 and bound > columns[column]:
                wrong.append(f"{column} ({columns[column]}) is fed by {path}, bounded at {bound}")
    assert wrong == [], wrong


def test_the_longest_error_cells_a_body_can_make_fit_their_column() -> None:
    """Every (arm, clock) once (a body naming one twice is refused) with the longest
    error status the schema allows, and the probe's too."""
    cell_status = schema_node(".cells[].status")["enum"]
    probe_status = schema_node(".probe.status")["enum"]
    golden = decode_body((GOLDEN / "stub-in-process.body.json").read_bytes())
    cell = golden.cells[0]
    body = msgspec.structs.replace(
        golden,
        cells=[
            msgspec.structs.replace(cell, arm=arm, clock=clock, status=max(ERROR_STATUSES, key=len))
            for arm in ARMS
            for clock in CLOCKS
        ],
        probe=msgspec.structs.replace(
            golden.probe,
            status=max(set(probe_status) & {"harness_error", "incomplete"}, key=len),
        ),
    )
    assert set(ERROR_STATUSES) <= set(cell_status)
    longest = run_facts(body)["error_cells"]
    assert longest.count(",") == len(ARMS) * len(CLOCKS)  # every cell and the probe named
    assert len(longest) <= bounded_columns()["runs.Run.error_cells"]


def test_forms_and_release_names_are_stored_in_text_columns() -> None:
    """The forms of a run over a release with many of them, a manifest's name: no bound
    that would be right, so no bounded column to overflow."""
    from pitweb.releases.models import Release

    assert isinstance(Run._meta.get_field("forms"), models.TextField)
    assert isinstance(Release._meta.get_field("name"), models.TextField)


def _where(path: str) -> str:
    """A leaf path as the place in a body it names first (``cells/0/status``)."""
    return path.replace("[]", "/0").replace(".", "/").strip("/")


def _put(body: dict[str, Any], where: str, value: str) -> None:
    *parents, last = where.split("/")
    node: Any = body
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[last] = value
    # the config hash re-bound too, so a too-long config string meets only its bound
    body["binding"]["config_sha256"] = canonical.digest(body["config"])


ONE_LEAF = sorted(column for column, paths in BODY_COLUMNS.items() if len(paths) == 1)


def test_a_resealed_receipt_with_a_17_character_cell_status_is_refused(
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    upload_tmp: Path,  # noqa: F811
) -> None:
    before = stored()
    receipt = _sealed(stub_run, lambda body: _put(body, "cells/0/status", "s" * 17))
    response = token_client(submitter).post(
        "/api/runs/", _form(stub_run, {"receipt": receipt}), format="multipart"
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_receipt"
    assert error["message"].startswith("receipt cells/0/status: "), error
    nothing_stored(before, upload_tmp)


@pytest.mark.parametrize("column", ONE_LEAF)
def test_a_body_string_one_past_its_column_is_refused_naming_the_field(
    column: str,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    upload_tmp: Path,  # noqa: F811
) -> None:
    (path,) = BODY_COLUMNS[column]
    where = _where(path)
    too_long = "a" * (bounded_columns()[column] + 1)
    before = stored()
    receipt = _sealed(stub_run, lambda body: _put(body, where, too_long))
    response = token_client(submitter).post(
        "/api/runs/", _form(stub_run, {"receipt": receipt}), format="multipart"
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_receipt"
    assert error["message"].startswith(f"receipt {where}: "), error
    nothing_stored(before, upload_tmp)


@pytest.fixture(scope="module")
def longest_names_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """An honest run whose agent name and model version are as long as their columns,
    in characters that take two bytes each."""
    from harness.agents.adapters.plain import from_callable

    def first_two(prompt: str, tools: Any) -> list[str]:
        return [r["row_key"] for r in tools.pit_list(limit=2)["rows"]]

    columns = bounded_columns()
    return make_run(
        site_release,
        tmp_path_factory.mktemp("longest-names"),
        site_prices,
        agent=from_callable(first_two, name="é" * columns["runs.Run.agent"]),
        model_version="ü" * columns["runs.Run.model_version"],
    )


def test_free_text_as_long_as_its_column_is_stored_as_written(
    registered: Any, submitter: User, longest_names_run: Artifacts
) -> None:
    response = token_client(submitter).post(
        "/api/runs/", _form(longest_names_run, {}), format="multipart"
    )
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["submission"])
    assert run.agent == "é" * 200 and run.model_version == "ü" * 200
    assert run.status == "verified"
