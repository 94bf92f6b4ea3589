"""Ids people can use: a run id or a body-hash prefix names runs among those the
requester may see, in URLs, the API and compare."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from harness.receipt.build import receipt_text
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run, token_client

pytestmark = pytest.mark.django_db(transaction=True)


def submit(user: User, artifacts: Artifacts, receipt: bytes | None = None) -> Run:
    return submit_run(user, artifacts, **({"receipt": receipt} if receipt else {}))  # type: ignore[no-any-return]


def inflated(a: Artifacts) -> bytes:
    data = json.loads(a.receipt.read_text())
    for cell in data["body"]["cells"]:
        if cell["total_return"] is not None:
            cell["total_return"] += 0.1
    return receipt_text(data["body"], data["emitted_at"]).encode()


def test_a_run_id_or_a_hash_prefix_leads_to_the_runs_permalink(
    priced_release: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit(submitter, stub_run)
    sha = run.body_sha256[7:]
    for key in (run.run_id, sha[:12], sha[:40], sha.upper()[:20]):
        response = Client().get(f"/runs/{key}/")
        assert response.status_code == 302, key
        assert response.url == f"/runs/{sha}/?submission={run.pk}"
    assert Client().get(f"/api/runs/{run.run_id}/").json()["body_sha256"] == run.body_sha256
    for bad in (sha[:11], "zz" * 8, "x"):
        assert Client().get(f"/runs/{bad}/").status_code == 404, bad
        assert Client().get(f"/api/runs/{bad}/").json()["error"]["code"] == "not_found"


def test_a_run_id_two_runs_share_lists_the_visible_ones_and_only_those(
    priced_release: Any, submitter: User, other: User, stub_run: Artifacts
) -> None:
    honest = submit(submitter, stub_run)
    squat = submit(other, stub_run, inflated(stub_run))
    assert honest.run_id == squat.run_id
    page = Client().get(f"/runs/{honest.run_id}/")
    assert page.status_code == 300
    text = page.content.decode()
    assert honest.body_sha256 in text and squat.body_sha256 in text
    ambiguous = Client().get(f"/api/runs/{honest.run_id}/")
    assert ambiguous.status_code == 409 and ambiguous.json()["error"]["code"] == "ambiguous"
    # the squatter's run made private: to everyone else the id names one run again
    Run.objects.filter(pk=squat.pk).update(visibility="private")
    assert Client().get(f"/runs/{honest.run_id}/").status_code == 302
    assert squat.body_sha256 not in Client().get(f"/api/runs/{honest.run_id}/").content.decode()
    # its owner still sees both
    mine = token_client(other).get(f"/api/runs/{honest.run_id}/")
    assert mine.status_code == 409 and squat.body_sha256 in mine.json()["error"]["message"]


def test_compare_takes_short_ids_and_explains_what_it_could_not_use(
    priced_release: Any, submitter: User, stub_run: Artifacts, picky_run: Artifacts
) -> None:
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    keys = [a.run_id, b.body_sha256[7:19], "nothex!", "0" * 16, "1" * 16, "2" * 16]
    html = Client().get("/compare/?runs=" + ",".join(keys)).content.decode()
    assert 'id="fig-compare"' in html and a.run_id in html and b.run_id in html
    assert "Only 4 runs are compared at once: 1111111111111111, 2222222222222222 left out." in html
    assert "nothex! is not a run id or body hash" in html
    assert "0000000000000000 names no run you can see." in html


def test_compare_warns_when_runs_were_priced_with_different_versions(
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    tmp_path: Any,
    site_release: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pitweb.pricing import tasks
    from pitweb.pricing.services import reference_prices_register
    from tests.support.data import build_prices

    a = submit(submitter, stub_run)
    monkeypatch.setattr(tasks.rescore_run_task, "delay", lambda *args, **kw: None)
    reference_prices_register(
        release=priced_release,
        path=build_prices(tmp_path / "v2.csv", site_release, seed=5),
        source="v2",
        pulled_at="",
        staff=None,
        reason="a second version",
    )
    b = submit(submitter, picky_run)  # pending on v2; a's row points at v2 too
    Run.objects.filter(pk=a.pk).update(platform=a.platform)  # a keeps its v1 score
    html = Client().get(f"/compare/?runs={a.run_id},{b.run_id}").content.decode()
    assert "priced with different reference-price versions: v1, v2." in html
