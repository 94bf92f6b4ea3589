"""A board snapshot's digest covers its rows' digests: recomputed offline from its JSON
export, it holds with rows removed after publication (each by its row digest) and fails
when anything else changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import canonical
from harness.cli import main
from harness.snapshot import (
    REMOVED,
    SnapshotError,
    redacted,
    row_digest,
    snapshot_digest,
    verify_snapshot,
)


def snapshot(*submissions: int) -> dict[str, Any]:
    return {
        "snapshot_version": 2,
        "taken_at": "2026-12-01T00:00:00+00:00",
        "board_version": 7,
        "filters": {"release": None, "isolated": False},
        "board": {
            "ranked": [
                {
                    "submission": n,
                    "agent": f"agent-{n}",
                    "rank": str(i + 1),
                    "platform_shifted_pit": 0.01 * n + 0.001,
                }
                for i, n in enumerate(submissions)
            ],
            "pending": [],
        },
    }


def test_a_row_removed_after_the_snapshot_keeps_its_digest_and_nothing_of_its_run() -> None:
    body = snapshot(1, 2, 3)
    digest = snapshot_digest(body)
    taken = redacted(body, {2})
    removed = taken["board"]["ranked"][1]
    assert removed == {REMOVED: True, "row_digest": row_digest(body["board"]["ranked"][1])}
    assert "agent-2" not in canonical.line(taken)
    check = verify_snapshot(canonical.line(taken), digest)
    assert check.ok and check.removed == 1 and check.rows == 3


def test_a_changed_figure_or_a_dropped_row_fails_the_digest() -> None:
    body = snapshot(1, 2)
    digest = snapshot_digest(body)
    changed = json.loads(canonical.line(body))
    changed["board"]["ranked"][0]["platform_shifted_pit"] = 0.5
    assert not verify_snapshot(json.dumps(changed), digest).ok
    dropped = json.loads(canonical.line(body))
    del dropped["board"]["ranked"][1]
    assert not verify_snapshot(json.dumps(dropped), digest).ok
    wrong = redacted(body, {1})
    wrong["board"]["ranked"][0]["row_digest"] = "sha256:" + "0" * 64
    assert not verify_snapshot(json.dumps(wrong), digest).ok


@given(st.sets(st.sampled_from([1, 2, 3, 4, 5])))
def test_any_rows_removed_verify_and_the_export_s_key_order_does_not_matter(
    removed: set[int],
) -> None:
    body = snapshot(1, 2, 3, 4, 5)
    text = json.dumps(redacted(body, removed), indent=2)  # not canonical: reparsed
    assert verify_snapshot(text, snapshot_digest(body)).ok


def test_an_export_of_another_version_or_shape_is_refused() -> None:
    with pytest.raises(SnapshotError):
        verify_snapshot(json.dumps({**snapshot(1), "snapshot_version": 1}))
    with pytest.raises(SnapshotError):
        verify_snapshot("[]")
    with pytest.raises(SnapshotError):
        verify_snapshot(json.dumps(redacted(snapshot(1), {1}) | {"board": {"ranked": [
            {REMOVED: True, "row_digest": "md5:x"}]}}))  # fmt: skip


def test_the_cli_verifies_a_snapshot_and_exits_1_on_a_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = snapshot(1, 2)
    digest = snapshot_digest(body)
    path = tmp_path / "snapshot.json"
    path.write_text(canonical.line(redacted(body, {1})), encoding="utf-8")
    assert main(["snapshot", "verify", str(path), "--digest", digest]) == 0
    out = capsys.readouterr().out
    assert f"snapshot digest {digest}" in out and "removed after the snapshot 1" in out
    assert main(["snapshot", "verify", str(path), "--digest", "sha256:" + "1" * 64]) == 1
    assert main(["snapshot", "verify", str(path)]) == 0
    path.write_text("{}", encoding="utf-8")
    assert main(["snapshot", "verify", str(path)]) == 2
