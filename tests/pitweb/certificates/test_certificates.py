"""A run's certificate: signed over what the site proved, checked with nothing but the
published keys, revoked when its run is taken down."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.attest.certificate import verify_certificate
from harness.attest.keys import read_keyset
from harness.attest.revocations import verify_revocations
from pitweb.certificates import services
from pitweb.certificates.models import Certificate
from pitweb.certificates.services import certificate_current, certificate_revoke
from pitweb.runs.models import Run
from pitweb.runs.services import run_set_hidden, run_withdraw
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db


def _get(client: Client, url: str) -> Any:
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    return json.loads(response.content)


def _certificate_url(run: Run) -> str:
    return f"/runs/{run.body_sha256.removeprefix('sha256:')}/certificate.json?submission={run.pk}"


@pytest.fixture()
def proven_run(
    priced_release: Any, submitter: User, stub_run: Artifacts,
    django_capture_on_commit_callbacks: Any,
) -> Run:  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        run: Run = submit_run(submitter, stub_run)
    run.refresh_from_db()
    assert run.status == "verified" and run.proven
    return run


def test_a_proven_runs_certificate_verifies_with_the_published_keys(
    proven_run: Run, client: Client
) -> None:
    envelope = _get(client, _certificate_url(proven_run))
    keys = read_keyset(_get(client, "/.well-known/pitweb-keys.json"))
    receipt = {"body": proven_run.body, "body_sha256": proven_run.body_sha256}
    revocations = _get(client, "/.well-known/pitweb-revocations.json")
    check = verify_certificate(envelope, keys, receipt=receipt, revocations=revocations)
    assert check.ok and check.revocation_checked, check.lines
    said = check.predicate
    assert said["run"]["run_id"] == proven_run.run_id
    assert said["verification"]["level"] == proven_run.verification_level == "hashes_verified"
    assert said["mask"]["verdict"] == proven_run.mask_verdict
    platform = proven_run.platform
    assert said["platform"]["contamination"] == platform.figures["contamination"]
    assert said["platform"]["reference_prices"]["file_sha256"] == platform.prices.file_sha256
    assert said["forward"] == {"status": "not_committed", "commitment": None}


def test_an_unchanged_verdict_is_signed_once(proven_run: Run, client: Client) -> None:
    first = _get(client, _certificate_url(proven_run))
    assert _get(client, _certificate_url(proven_run)) == first
    assert Certificate.objects.filter(run=proven_run).count() == 1


def test_a_run_not_proven_gets_no_certificate(
    priced_release: Any, submitter: User, stub_run: Artifacts, client: Client
) -> None:
    run: Run = submit_run(submitter, stub_run)
    Run.objects.filter(pk=run.pk).update(verification_level="self_reported", status="received")
    response = client.get(_certificate_url(run))
    assert response.status_code == 409
    assert json.loads(response.content)["error"]["code"] == "not_certifiable"
    assert not Certificate.objects.exists()


@pytest.mark.parametrize("down", ["hidden", "withdrawn"])
def test_a_run_taken_down_has_its_certificate_revoked(
    down: str, proven_run: Run, submitter: User, staff: User, client: Client
) -> None:
    envelope = _get(client, _certificate_url(proven_run))
    if down == "hidden":
        run_set_hidden(run=proven_run, staff=staff, hidden=True, reason="copied agent")
    else:
        run_withdraw(run=proven_run, owner=submitter, reason="a bug in my agent")
    keys = read_keyset(_get(client, "/.well-known/pitweb-keys.json"))
    listed = verify_revocations(_get(client, "/.well-known/pitweb-revocations.json"), keys)
    certificate = Certificate.objects.get(run=proven_run)
    assert list(listed.revoked) == [certificate.certificate_id]
    check = verify_certificate(
        envelope, keys, revocations=_get(client, "/.well-known/pitweb-revocations.json")
    )
    assert check.failed == ["revocation"]
    assert ("copied agent" if down == "hidden" else "a bug in my agent") in check.lines[-1]
    assert client.get(_certificate_url(proven_run)).status_code == 404  # no longer shown


def test_staff_revoke_a_certificate_with_a_reason(
    proven_run: Run, staff: User, client: Client
) -> None:
    certificate = certificate_current(run=proven_run)
    client.force_login(staff)
    url = f"/certificates/{certificate.certificate_id.removeprefix('sha256:')}/revoke"
    unconfirmed = client.post(url, {"reason": "signed in error"})
    assert unconfirmed.status_code == 302
    certificate.refresh_from_db()
    assert certificate.revoked_at is None
    client.post(url, {"reason": "signed in error", "confirm": "yes"})
    certificate.refresh_from_db()
    assert certificate.revoked_at is not None and certificate.revoked_reason == "signed in error"
    # the run is still proven: asking again signs a new certificate, the revoked one stays
    fresh = certificate_current(run=proven_run)
    assert fresh.pk != certificate.pk and fresh.claims == certificate.claims


def test_a_submitter_cannot_revoke(proven_run: Run, submitter: User, client: Client) -> None:
    certificate = certificate_current(run=proven_run)
    client.force_login(submitter)
    url = f"/certificates/{certificate.certificate_id.removeprefix('sha256:')}/revoke"
    response = client.post(url, {"reason": "mine", "confirm": "yes"})
    assert response.status_code in (302, 403)
    certificate.refresh_from_db()
    assert certificate.revoked_at is None


def test_the_run_page_offers_the_certificate(proven_run: Run, client: Client) -> None:
    page = client.get(
        f"/runs/{proven_run.body_sha256.removeprefix('sha256:')}/?submission={proven_run.pk}"
    )
    text = page.content.decode()
    assert 'id="certificate-download"' in text
    assert "pit-harness certificate verify certificate.json --keys pitweb-keys.json" in text


def test_the_run_api_names_the_certificate_only_for_a_proven_public_run(
    proven_run: Run, staff: User, client: Client
) -> None:
    sha = proven_run.body_sha256.removeprefix("sha256:")
    answer = _get(client, f"/api/runs/{sha}/?submission={proven_run.pk}")
    assert answer["certificate"] == _certificate_url(proven_run)
    assert _get(client, answer["certificate"])["payloadType"] == "application/vnd.in-toto+json"
    run_set_hidden(run=proven_run, staff=staff, hidden=True, reason="checking the API")
    client.force_login(staff)
    assert _get(client, f"/api/runs/{sha}/?submission={proven_run.pk}")["certificate"] is None


REVOCATIONS = "/.well-known/pitweb-revocations.json"


@pytest.fixture()
def signatures(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every statement the revocation list's service signs from now on."""
    signed: list[dict[str, Any]] = []
    real = services.site_sign

    def counting(statement: dict[str, Any]) -> dict[str, Any]:
        signed.append(statement)
        return real(statement)

    monkeypatch.setattr(services, "site_sign", counting)
    return signed


def test_an_unchanged_revocation_list_is_signed_once(
    proven_run: Run, staff: User, client: Client, signatures: list[dict[str, Any]]
) -> None:
    certificate_revoke(
        certificate=certificate_current(run=proven_run), reason="signed in error", staff=staff
    )
    del signatures[:]  # the certificate's own signature
    first = client.get(REVOCATIONS)
    again = client.get(REVOCATIONS)
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert len(signatures) == 1


def test_a_revocation_is_in_the_very_next_revocation_list(
    proven_run: Run, staff: User, client: Client, signatures: list[dict[str, Any]]
) -> None:
    certificate = certificate_current(run=proven_run)
    keys = read_keyset(_get(client, "/.well-known/pitweb-keys.json"))
    assert verify_revocations(_get(client, REVOCATIONS), keys).revoked == {}
    certificate_revoke(certificate=certificate, reason="signed in error", staff=staff)
    listed = verify_revocations(_get(client, REVOCATIONS), keys).revoked
    assert list(listed) == [certificate.certificate_id]
    assert listed[certificate.certificate_id]["reason"] == "signed in error"
    assert len([s for s in signatures if "revoked" in s["predicate"]]) == 2
