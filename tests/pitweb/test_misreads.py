"""What a visitor would misread, fixed: the status page's empty queue, the admin's
names, the way back from the API docs, and a way to log out."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

pytestmark = pytest.mark.django_db


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
    assert "log out" in html and 'action="/logout/"' in html
    token = client.cookies["csrftoken"].value
    answer = client.post("/logout/", {"next": "/status/", "csrfmiddlewaretoken": token})
    assert answer.status_code == 302 and answer["Location"] == "/status/"
    assert "log in" in client.get("/status/").content.decode()
    again = Client()
    again.force_login(submitter)
    elsewhere = again.post("/logout/", {"next": "https://example.com/"})  # never off the site
    assert elsewhere.status_code == 302 and elsewhere["Location"] == "/"
