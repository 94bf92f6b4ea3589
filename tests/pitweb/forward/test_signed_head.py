"""The commitment log's head signed by the site (/forward/log/head.signed.json): a reader
keeps it with the site's published keys, and ``pit-harness commitments verify
--signed-head`` later holds any copy of the log to it; head.json keeps its body and ETag."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from harness.attest.heads import verify_head
from harness.attest.keys import read_keyset
from harness.cli import main
from harness.forward.log import entry_digest, verify_log
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from pitweb.core.signing import published_keys
from pitweb.execution.models import RegisteredAgent
from pitweb.forward import services
from pitweb.releases.models import Release
from tests.pitweb.forward.conftest import BENCH

pytestmark = pytest.mark.django_db


def saved(folder: Path, name: str, content: bytes | str) -> str:
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def verify(log: str, head: str, keys: str) -> int:
    return main(["commitments", "verify", log, "--signed-head", head, "--keys", keys])


def rewritten(log: dict[str, Any]) -> dict[str, Any]:
    """The log as a site might show it later: the first commitment's agent changed and
    every digest after it made again, so the chain holds on its own."""
    first, second = (json.loads(json.dumps(e)) for e in log["entries"])
    first["commit"]["agent"]["name"] = "a-better-agent"
    second["prev"] = second["withdraw"]["entry"] = entry_digest(first)
    return {**log, "entries": [first, second], "head": {"seq": 2, "digest": entry_digest(second)}}


def test_a_signed_head_kept_earlier_holds_the_log_to_it(
    agent: RegisteredAgent,
    registered: Release,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    empty = Client().get("/forward/log/head.signed.json")
    assert empty.status_code == 404 and empty.json()["error"]["code"] == "empty_log"
    made = services.commitment_create(by=agent.owner, agent=agent, release=registered, **BENCH)
    answer = Client().get("/forward/log/head.signed.json")
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json"
    assert answer["Cache-Control"] == "no-cache" and not answer.has_header("ETag")
    head = verify_head(answer.json(), read_keyset(published_keys()))
    assert head.kept() == f"1:{made.entry.digest}"
    kept = saved(tmp_path, "head.json", answer.content)
    keys = saved(tmp_path, "pitweb-keys.json", json.dumps(published_keys()))
    # head.json is the head alone, as before, and revalidated by it
    plain = Client().get("/forward/log/head.json")
    assert plain.json() == {"seq": 1, "digest": made.entry.digest} and plain.has_header("ETag")
    # later: the log has grown, and still holds the head the site signed
    services.commitment_withdraw(by=agent.owner, commitment=made, reason="a bug in it")
    log = Client().get("/forward/log.json").json()
    capsys.readouterr()
    assert verify(saved(tmp_path, "log.json", json.dumps(log)), kept, keys) == EXIT_OK
    assert f"signed head ok  1:{made.entry.digest}" in capsys.readouterr().out
    # a log rewritten behind the head: its chain holds alone, but not the signed head
    other = rewritten(log)
    assert [e.seq for e in verify_log(other)] == [1, 2]
    assert verify(saved(tmp_path, "other.json", json.dumps(other)), kept, keys) == EXIT_MISMATCH
    assert f"kept head 1:{made.entry.digest}" in capsys.readouterr().out
    # a signed head edited to name another entry: its signature does not hold
    envelope = json.loads(answer.content)
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["seq"] = 2
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    forged = saved(tmp_path, "forged.json", json.dumps(envelope))
    assert verify(saved(tmp_path, "log.json", json.dumps(log)), forged, keys) == EXIT_MISMATCH
    assert "signed head BROKEN" in capsys.readouterr().out


def test_the_track_page_says_how_to_keep_a_signed_head(
    agent: RegisteredAgent, registered: Release
) -> None:
    page = Client().get("/forward/").content.decode()
    assert (
        "there is no head to sign yet" in page
        and 'href="/forward/log/head.signed.json"' not in (page)
    )
    services.commitment_create(by=agent.owner, agent=agent, release=registered, **BENCH)
    page = Client().get("/forward/").content.decode()
    assert 'href="/forward/log/head.signed.json"' in page
    for line in (
        "curl -o head.json http://testserver/forward/log/head.signed.json",
        "curl -o pitweb-keys.json http://testserver/.well-known/pitweb-keys.json",
        "pit-harness commitments verify log.json --signed-head head.json --keys pitweb-keys.json",
    ):
        assert line in page, line
