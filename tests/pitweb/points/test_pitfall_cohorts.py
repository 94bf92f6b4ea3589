"""PITFALL's own cohorts on the site: its sealed-suite artifacts uploaded as its tools write
them, verified alone and together before any is stored, shown suite by suite, served back
byte for byte; a changed byte, or artifacts that disagree, refused with nothing stored."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from pitweb.points.models import PitfallArtifact
from tests.support import pitfall_cohort as build

pytestmark = pytest.mark.django_db


def _files(*artifacts: dict[str, Any]) -> list[io.BytesIO]:
    files = []
    for n, artifact in enumerate(artifacts):
        upload = io.BytesIO(json.dumps(artifact, ensure_ascii=False).encode("utf-8"))
        upload.name = f"{artifact['artifact_type']}-{n}.json"
        files.append(upload)
    return files


def _staff(staff: User) -> Client:
    client = Client()
    client.force_login(staff)
    return client


def test_a_cohort_registered_with_pitfall_s_tools_is_checked_and_shown(
    staff: User, submitter: User
) -> None:
    cohort = build.cohort()
    client = _staff(staff)
    # the public commitment first, alone: registered, no case named
    assert (
        client.post("/points/pitfall/", {"artifacts": _files(cohort["public"])}).status_code == 302
    )
    page = Client().get("/points/pitfall/").content.decode()
    suite_id = cohort["public"]["suite_id"]
    assert suite_id in page and "registered" in page and "names no case" in page
    # then the rest: the plan, the seals, the finalized suite, a label and its resolution
    rest = [
        cohort["plan"],
        *cohort["seals"],
        cohort["suite"],
        cohort["label"],
        cohort["resolution"],
    ]
    assert client.post("/points/pitfall/", {"artifacts": _files(*rest)}).status_code == 302
    assert PitfallArtifact.objects.count() == len(rest) + 1
    page = Client().get("/points/pitfall/").content.decode()
    assert "finalized" in page and "resolved 1 of 6" in page and "Not scored" in page
    # each artifact is served back exactly as uploaded
    stored = PitfallArtifact.objects.get(artifact_type="pitfall_sealed_suite")
    served = Client().get(f"/points/pitfall/{stored.digest}.json")
    assert json.loads(served.content) == cohort["suite"]
    prefixed = Client().get(f"/points/pitfall/sha256:{stored.digest}.json")
    assert prefixed.content == served.content
    # the same files again: nothing new
    assert client.post("/points/pitfall/", {"artifacts": _files(*rest)}).status_code == 302
    assert PitfallArtifact.objects.count() == len(rest) + 1
    # only staff upload
    outsider = Client()
    outsider.force_login(submitter)
    assert (
        outsider.post("/points/pitfall/", {"artifacts": _files(cohort["public"])}).status_code
        == 403
    )


def test_a_changed_byte_or_artifacts_that_disagree_are_refused_whole(staff: User) -> None:
    cohort = build.cohort()
    client = _staff(staff)
    changed = json.loads(json.dumps(cohort["seals"][0]))
    changed["results"][0]["latency_seconds"] += 1  # one number, the commitment left as it was
    refused = client.post("/points/pitfall/", {"artifacts": _files(cohort["plan"], changed)})
    assert refused.status_code == 400 and b"commitment" in refused.content
    assert not PitfallArtifact.objects.exists()
    # a public commitment to another plan: each holds alone, not together
    other = build.public(build.plan(registered_at="2026-02-08T02:00:00+00:00"))
    refused = client.post("/points/pitfall/", {"artifacts": _files(cohort["plan"], other)})
    assert refused.status_code == 400 and b"do not hold together" in refused.content
    assert not PitfallArtifact.objects.exists()
    legacy = {**cohort["public"], "artifact_type": "finagentbench_sealed_suite_plan_commitment"}
    refused = client.post("/points/pitfall/", {"artifacts": _files(legacy)})
    assert refused.status_code == 400 and b"finagentbench" in refused.content
    assert Client().get("/points/pitfall/" + "0" * 64 + ".json").status_code == 404
