"""The reasoning audit on the site: made again by the worker when it verifies a run,
stored by its digest, shown on the run page and downloaded as the bytes it stored."""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.test import Client

from harness.receipt.audit import (
    TrajectoryFormatError,
    audit_digest,
    reasoning_audit,
    run_bundle,
)
from pitweb.runs import selectors, services
from pitweb.runs.models import JobState, ReasoningAudit, Run
from tests.pitweb.conftest import Artifacts, make_run, submit_run
from tests.support.planted import date_planter

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="session")
def planted_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """An agent that writes the real dates of shifted rows into its reasoning."""
    return make_run(
        site_release,
        tmp_path_factory.mktemp("planted-run"),
        site_prices,
        agent=date_planter(),
        agent_process="in_process",
    )


def page(run: Run, client: Client | None = None) -> str:
    sha = run.body_sha256.removeprefix("sha256:")
    response = (client or Client()).get(f"/runs/{sha}/?submission={run.pk}")
    assert response.status_code == 200
    return response.content.decode()


def section(text: str) -> str:
    """The run page's reasoning-audit section, as a visitor reads it."""
    start = text.index('<h2 id="reasoning-audit">')
    return text[start : text.index("<h2", start + 1)]


def test_a_verified_run_gets_the_audit_the_harness_makes(
    registered: Any, submitter: User, stub_run: Artifacts, site_release: Path
) -> None:
    run = submit_run(submitter, stub_run)
    assert run.status == JobState.VERIFIED
    audit = run.reasoning_audit
    expected = reasoning_audit(stub_run.trajectory, run_bundle(site_release, stub_run.trajectory))
    assert audit.digest == audit_digest(expected) == audit.artifact_sha256
    assert (audit.texts, audit.date_hits, audit.issuer_hits) == (
        expected["totals"]["texts"],
        0,
        0,
    )
    assert audit.texts > 0 and audit.audit_version == expected["audit_version"]
    assert [(c["arm"], c["clock"]) for c in audit.cells] == [
        (c["arm"], c["clock"]) for c in expected["cells"]
    ]
    assert all("excerpts" not in c for c in audit.cells)
    with default_storage.open(audit.artifact_name, "rb") as handle:
        stored = handle.read()
    assert "sha256:" + hashlib.sha256(stored).hexdigest() == audit.digest
    job = run.jobs.get()
    assert {"name": "reasoning_audit", "status": "ok", "detail": ""} in job.checks


def test_a_real_date_written_on_the_shifted_arm_is_counted_and_shown(
    registered: Any, submitter: User, planted_run: Artifacts
) -> None:
    run = submit_run(submitter, planted_run)
    assert run.status == JobState.VERIFIED
    audit = run.reasoning_audit
    shifted = [c for c in audit.cells if c["arm"] == "shifted"]
    assert audit.date_hits == sum(c["date_hits"] for c in shifted) > 0
    assert all(c["date_hits"] == 0 for c in audit.cells if c["arm"] == "redacted")
    shown = section(page(run))
    assert re.search(r'<span class="badge bad">\d+ real dates? named</span>', shown)
    assert "some named what their arm hid from it" in shown


def test_the_run_page_shows_the_audit_in_words(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit_run(submitter, stub_run)
    audit = run.reasoning_audit
    shown = section(page(run))
    text = html.unescape(re.sub(r"<[^>]+>", " ", shown))
    assert "none named a real date or an issuer its arm hid from it" in text
    for cell in audit.cells:
        name = (
            "shifted mask probe" if cell["clock"] == "probe" else f"{cell['arm']}/{cell['clock']}"
        )
        assert re.search(
            rf"{re.escape(name)}\s+the (real dates|issuer) \(.*?\)\s+{cell['texts']:,} texts? "
            rf"scanned\s+{cell['rows_served']:,} rows?\s+none",
            text,
        ), name
    assert audit.digest in shown and audit.not_scanned in text
    link = f'href="/runs/{run.body_sha256.removeprefix("sha256:")}/reasoning-audit.json?submission={run.pk}"'
    assert link in shown
    commands = html.unescape(
        re.search(r'<pre id="audit-commands"[^>]*>(.*?)</pre>', shown, re.S)[1]
    )
    first, check = commands.splitlines()
    assert first.startswith("pit-harness audit-reasoning --receipt receipt.json ")
    assert first.endswith(" --out reasoning-audit.json")
    assert check == (
        f"echo '{audit.digest.removeprefix('sha256:')}  reasoning-audit.json' | sha256sum -c -"
    )


def test_the_json_download_is_the_stored_audit_its_digest_names(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit_run(submitter, stub_run)
    response = Client().get(f"/runs/{run.run_id}/reasoning-audit.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    data = b"".join(response.streaming_content)
    assert "sha256:" + hashlib.sha256(data).hexdigest() == run.reasoning_audit.digest
    artifact = json.loads(data)
    assert audit_digest(artifact) == run.reasoning_audit.digest
    assert artifact["trajectory_sha256"] == run.trajectory_sha256
    assert artifact["run_id"] == run.run_id


def test_a_reverification_makes_the_same_audit_again(
    registered: Any, submitter: User, stub_run: Artifacts, staff: User
) -> None:
    run = submit_run(submitter, stub_run)
    first = run.reasoning_audit
    job = services.run_reverify(run=run, staff=staff, reason="again")
    job.refresh_from_db()
    assert job.state == JobState.VERIFIED
    again = ReasoningAudit.objects.get(run=run)
    assert ReasoningAudit.objects.count() == 1 and again.pk == first.pk
    assert (again.digest, again.artifact_name, again.cells) == (
        first.digest,
        first.artifact_name,
        first.cells,
    )
    assert again.created_at >= first.created_at
    _, stored = default_storage.listdir("audits")
    assert stored == [first.artifact_name.removeprefix("audits/")]


def test_a_run_not_proven_shows_no_audit(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit_run(submitter, stub_run)
    # a verification pending again (its row still there): nothing of it is shown
    Run.objects.filter(pk=run.pk).update(status="verifying", verification_level="self_reported")
    run.refresh_from_db()
    assert ReasoningAudit.objects.filter(run=run).exists()
    shown = section(page(run))
    assert 'id="no-audit"' in shown and "pending verification" in shown
    assert "audit-digest" not in shown and "audit-cells" not in shown
    assert selectors.reasoning_audit_of(run) is None
    response = Client().get(f"/runs/{run.run_id}/reasoning-audit.json")
    assert response.status_code == 409 and "withheld" in response.json()


def test_a_trajectory_that_cannot_be_audited_is_refuted_and_loses_its_audit(
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    staff: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pitweb.runs import verification

    run = submit_run(submitter, stub_run)
    assert ReasoningAudit.objects.filter(run=run).exists()

    def unreadable(*args: Any, **kwargs: Any) -> Any:
        raise TrajectoryFormatError("line 7 is not JSON")

    monkeypatch.setattr(verification, "reasoning_audit", unreadable)
    job = services.run_reverify(run=run, staff=staff, reason="a new reader")
    job.refresh_from_db()
    assert (job.state, job.mismatch_check) == (JobState.MISMATCH, "reasoning_audit")
    assert not ReasoningAudit.objects.filter(run=run).exists()
    run.refresh_from_db()
    assert "audit-digest" not in section(page(run))


def test_a_run_verified_before_audits_says_a_reverification_makes_one(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit_run(submitter, stub_run)
    ReasoningAudit.objects.filter(run=run).delete()
    shown = section(page(run))
    assert "a re-verification makes one" in shown
    assert Client().get(f"/runs/{run.run_id}/reasoning-audit.json").status_code == 404


def test_a_proven_runs_certificate_claims_its_audit(
    registered: Any, submitter: User, planted_run: Artifacts
) -> None:
    from pitweb.certificates.claims import run_predicate

    run = submit_run(submitter, planted_run)
    audit = run.reasoning_audit
    assert run_predicate(Run.objects.get(pk=run.pk))["reasoning_audit"] == {
        "digest": audit.digest,
        "texts": audit.texts,
        "date_hits": audit.date_hits,
        "issuer_hits": audit.issuer_hits,
    }
    assert audit.date_hits > 0
