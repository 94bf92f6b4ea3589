"""A sealed set's commitment: salted, over the hidden sections alone, recomputable."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness import canonical
from harness.cli import main as cli_main
from harness.points.markdown import load_points
from harness.points.seal import SealError, commitment, hidden_sections, new_salt, question_digest
from tests.support.data import shared_path


@pytest.fixture(scope="module")
def points() -> list:
    return load_points(shared_path("data", "pitfall", "points"))


def test_the_commitment_binds_the_salt_and_every_hidden_section(points: list) -> None:
    salt = new_salt()
    sealed = commitment(salt, points)
    assert sealed.startswith("sha256:") and commitment(salt, points) == sealed
    assert commitment(new_salt(), points) != sealed
    changed = [dataclasses.replace(points[0], ground_truth=points[0].ground_truth + " ")]
    assert commitment(salt, changed + points[1:]) != sealed
    changed = [dataclasses.replace(points[-1], provenance=points[-1].provenance + ".")]
    assert commitment(salt, points[:-1] + changed) != sealed
    # the order of the files does not matter; the Question is not part of it
    assert commitment(salt, list(reversed(points))) == sealed
    asked = [dataclasses.replace(points[0], question="another question")]
    assert commitment(salt, asked + points[1:]) == sealed
    assert question_digest(asked + points[1:]) != question_digest(points)
    # the hidden sections, exactly as parsed, in id order, as canonical JSON
    expected = [
        {"ground_truth": p.ground_truth, "id": p.id, "provenance": p.provenance}
        for p in sorted(points, key=lambda p: p.id)
    ]
    assert json.loads(hidden_sections(points)) == expected
    assert hidden_sections(points) == canonical.dumps_bytes(expected)


@pytest.mark.parametrize("salt", ["", "AB" * 32, "ab" * 31, "zz" * 32, "ab" * 32 + "\n"])
def test_a_salt_that_is_not_32_bytes_of_lowercase_hex_is_refused(points: list, salt: str) -> None:
    with pytest.raises(SealError):
        commitment(salt, points)


def test_the_command_prints_what_a_revealed_page_shows(
    points: list, capsys: pytest.CaptureFixture[str]
) -> None:
    salt = "0f" * 32
    folder = shared_path("data", "pitfall", "points")
    assert cli_main(["points", "commitment", "--points-dir", str(folder), "--salt", salt]) == 0
    out = capsys.readouterr().out
    assert f"commitment {commitment(salt, points)}" in out
    assert question_digest(points) in out
    assert cli_main(["points", "commitment", "--points-dir", str(folder), "--salt", "x"]) == 2
    assert "64 lowercase hex" in capsys.readouterr().err
