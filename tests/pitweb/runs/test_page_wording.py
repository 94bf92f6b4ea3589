"""What a visitor would misread, fixed: the status page's empty queue, the admin's
names, the way back from the API docs, a way to log out, and every verdict that qualifies
a run's numbers at the top of its page (a refuted receipt never "not checked")."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.pitweb.conftest import Artifacts, submit_run
from tests.pitweb.runs.test_pages import arm_aware_run  # noqa: F401 - a fixture: deltas not zero

pytestmark = pytest.mark.django_db(transaction=True)  # verification runs on commit


def test_an_empty_queue_says_no_job_is_waiting_not_a_dash_of_seconds() -> None:
    html = Client().get("/status/").content.decode()
    assert "no job waiting" in html and "— s" not in html


def test_the_admin_names_reference_prices_as_english_does(staff: User) -> None:
    client = Client()
    client.force_login(staff)
    html = client.get("/admin/").content.decode()
    assert "Reference prices" in html and "pricess" not in html


def test_the_api_docs_lead_back_to_the_site() -> None:
    schema = Client().get("/api/schema/?format=json").json()
    assert "[Back to the site](/)" in schema["info"]["description"]


def test_a_signed_in_visitor_can_log_out_and_lands_where_they_were(submitter: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(submitter)
    html = client.get("/status/").content.decode()
    assert "Sign out" in html and 'action="/logout/"' in html
    token = client.cookies["csrftoken"].value
    answer = client.post("/logout/", {"next": "/status/", "csrfmiddlewaretoken": token})
    assert answer.status_code == 302 and answer["Location"] == "/status/"
    assert "Sign out" not in client.get("/status/").content.decode()
    again = Client()
    again.force_login(submitter)
    elsewhere = again.post("/logout/", {"next": "https://example.com/"})  # never off the site
    assert elsewhere.status_code == 302 and elsewhere["Location"] == "/"


def _verdicts(html: str) -> str:
    start = html.index('id="verdicts"')
    return html[start : html.index("</ul>", start)]


def test_a_leaking_masks_verdict_sits_at_the_top_of_its_run_page(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    from pitweb.runs.models import Run

    run = submit_run(submitter, stub_run)
    assert run.status == "verified"
    page = f"/runs/{run.body_sha256[7:]}/?submission={run.pk}"
    top = _verdicts(Client().get(page).content.decode())
    assert "verdict-good" in top and "mask holds" in top
    Run.objects.filter(pk=run.pk).update(mask_verdict="mask_leaks")
    html = Client().get(page).content.decode()
    top = _verdicts(html)
    assert 'class="verdict-bad">mask leaks' in top
    assert html.index('id="verdicts"') < html.index("<h2>Platform figures</h2>")


def test_a_refuted_receipt_is_never_called_not_checked(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    from pitweb.runs.models import Run

    run = submit_run(submitter, stub_run)
    Run.objects.filter(pk=run.pk).update(status="mismatch", verification_level="self_reported")
    html = Client().get(f"/runs/{run.body_sha256[7:]}/?submission={run.pk}").content.decode()
    top = _verdicts(html)
    assert "refuted" in top and "mask holds by the receipt&#x27;s own word, not proven" in top
    assert "verdict-good" not in top  # nothing of a refuted run reads as proven
    level = html[html.index('<p class="level">') :]
    assert level.startswith('<p class="level"><b>Level:</b> refuted: the system re-derived')
    assert "not checked" not in level[: level.index("</p>")]
    answer = Client().get(f"/api/runs/{run.body_sha256[7:]}/?submission={run.pk}").json()
    assert answer["verification_level_words"].startswith("refuted")


def test_two_submissions_of_one_run_id_are_told_apart_on_the_board(
    registered: Any, submitter: User, other: User, stub_run: Artifacts
) -> None:
    first, second = submit_run(submitter, stub_run), submit_run(other, stub_run)
    assert first.run_id == second.run_id and first.pk != second.pk
    html = Client().get("/benchmarks/", follow=True).content.decode()
    assert f"by {submitter.username} (submission {first.pk})" in html
    assert f"by {other.username} (submission {second.pk})" in html


def test_the_contamination_chart_has_intervals_and_its_caption_claims_no_more(
    priced_release: Any,
    submitter: User,
    arm_aware_run: Artifacts,  # noqa: F811
) -> None:
    import json
    import re

    run = submit_run(submitter, arm_aware_run)
    run.refresh_from_db()
    figures = run.platform.figures
    interval = figures["contamination_interval_95"]["pit"]["main_minus_shifted"]
    assert interval is not None and interval[0] <= interval[1]
    html = Client().get(f"/runs/{run.body_sha256[7:]}/?submission={run.pk}").content.decode()
    found = re.search(r'<script id="fig-deltas" type="application/json">(.*?)</script>', html, re.S)
    assert found is not None
    drawn = json.loads(found.group(1))
    assert any("error_y" in trace for trace in drawn["data"])
    assert "measures memory of the period" not in html
    assert any(words in html for words in ("spans zero", "lies above zero", "lies below zero"))
