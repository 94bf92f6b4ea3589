"""The receipt body's types: a body decodes once into them, refusing what the harness
could not have written (with the field's path), and its canonical bytes come back
unchanged; the published schema is the one the types generate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from harness import RunConfig, canonical, outcomes, run
from harness.agents import stub
from harness.agents.base import AgentSpec
from harness.receipt import model
from harness.receipt.model import BodyError, body_dict, body_from_dict, decode_body
from harness.receipt.schemas import (
    SCHEMA_FILE,
    generate,
    receipt_body_schema,
    receipt_body_validator,
    schema_text,
    write_schema,
)
from tests.harness.receipt.test_receipt_schema import _Flaky

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
BODIES = ("stub-in-process", "earliest-five-priced", "stub-isolated", "egress-loopback")
VOLATILE = "<volatile>"


def _golden(name: str) -> dict[str, Any]:
    """A golden body, with what it sets aside for the machine (an isolated run's
    capabilities and the hashes over them) filled in with values of the right shape."""
    body: dict[str, Any] = json.loads((GOLDEN / f"{name}.body.json").read_text("utf-8"))
    if body["capabilities"] == VOLATILE:
        found = _golden("stub-in-process")["capabilities"]
        body["capabilities"] = {**found, "agent_process": "isolated", "sandbox": "bubblewrap"}
        body["capability_line"] = found["line"]
    return _filled(body)


def _filled(node: Any, key: str = "") -> Any:
    if isinstance(node, dict):
        return {k: _filled(v, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_filled(v, key) for v in node]
    if node == VOLATILE:
        return "0" * 16 if key == "run_id" else "sha256:" + "0" * 64
    return node


@pytest.fixture(scope="module")
def produced(march_release: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A body whose probe and one session failed: the optional parts appear."""
    out = tmp_path_factory.mktemp("model")
    config = RunConfig(
        bundle_path=str(march_release),
        forms=("8-K",),
        start="2023-03-01",
        end="2023-03-03",
        trajectory_path=str(out / "t.jsonl"),
        receipt_path=str(out / "r.json"),
        agent_process="in_process",
        probe=3,
    )
    body: dict[str, Any] = run(AgentSpec("flaky", _Flaky), config).body
    return body


@pytest.fixture(scope="module")
def unprobed(march_release: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A body whose probe did not run: the probe carries its arm, status and no items."""
    out = tmp_path_factory.mktemp("unprobed")
    config = RunConfig(
        bundle_path=str(march_release),
        forms=("8-K",),
        start="2023-03-01",
        end="2023-03-02",
        trajectory_path=str(out / "t.jsonl"),
        receipt_path=str(out / "r.json"),
        agent_process="in_process",
        probe=0,
        training_cutoff="2023-03-02",
    )
    body: dict[str, Any] = run(stub(), config).body
    return body


@pytest.mark.parametrize("name", BODIES)
def test_every_golden_body_comes_back_byte_identical_through_the_types(name: str) -> None:
    text = canonical.dumps(_golden(name))
    typed = decode_body(text)
    assert isinstance(typed, model.ReceiptBody)
    assert canonical.dumps(body_dict(typed)) == text
    assert canonical.dumps(body_dict(decode_body(text.encode()))) == text


def test_the_untouched_goldens_decode_as_they_are() -> None:
    for name in ("stub-in-process", "earliest-five-priced"):
        raw = (GOLDEN / f"{name}.body.json").read_text("utf-8").strip()
        assert canonical.dumps(body_dict(decode_body(raw))) == raw


def test_bodies_with_failed_parts_and_no_probe_come_back_byte_identical(
    produced: dict[str, Any], unprobed: dict[str, Any]
) -> None:
    assert produced["probe"]["fault"] is not None or produced["probe"]["agent_errors"]
    assert set(unprobed["probe"]) == {"arm", "status", "items"}
    assert unprobed["protocol"]["P2_training_cutoffs"]["check"] == "window_ends_before_cutoff"
    for body in (produced, unprobed):
        text = canonical.dumps(body)
        assert canonical.dumps(body_dict(decode_body(text))) == text
        assert body_dict(body_from_dict(body)) == body


def test_the_typed_body_reads_by_attribute(produced: dict[str, Any]) -> None:
    typed = body_from_dict(produced)
    assert [(c.arm, c.clock) for c in typed.cells] == [
        (c["arm"], c["clock"]) for c in produced["cells"]
    ]
    assert typed.probe.verdict == produced["probe"]["verdict"]
    assert (
        typed.protocol.p3.tool_calls
        == produced["protocol"]["P3_retrieval_timestamps"]["tool_calls"]
    )
    assert typed.config.forms == ["8-K"]


def _with(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> str:
    copy = json.loads(json.dumps(body))
    node = copy
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return canonical.dumps(copy)


@pytest.mark.parametrize(
    ("path", "where"),
    [
        (("forged",), "$"),
        (("cells", 0, "forged"), "$.cells[0]"),
        (("protocol", "P3_retrieval_timestamps", "forged"), "$.protocol.P3_retrieval_timestamps"),
        (("probe", "items", 0, "score", "forged"), "$.probe.items[0].score"),
        (("capabilities", "forged"), "$.capabilities"),
        (("network", "model_egress", "forged"), "$.network.model_egress"),
    ],
)
def test_an_unknown_field_is_refused_where_it_is(path: tuple[Any, ...], where: str) -> None:
    text = _with(_golden("stub-in-process"), path, 1)
    with pytest.raises(BodyError) as caught:
        decode_body(text)
    message = str(caught.value)
    assert "unknown field `forged`" in message and f"at `{where}`" in message, message
    assert list(receipt_body_validator().iter_errors(json.loads(text)))  # the schema too


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("cells", 0, "trades"), "many", "$.cells[0].trades"),
        (("cells", 0, "trades"), 2**31, "$.cells[0].trades"),
        (("cells", 0, "arm"), "sideways", "$.cells[0].arm"),
        (("probe", "items", 1, "score", "date_recovered"), "yes", "$.probe.items[1].score"),
        (("binding", "config_sha256"), "sha256:abc", "$.binding.config_sha256"),
        (("protocol", "P1_model_version", "kind"), "measured", "$.protocol.P1_model_version.kind"),
        (("contamination", "pit", "main_minus_shifted"), "0.1", ".main_minus_shifted`"),
        (("receipt_version",), 1, "$.receipt_version"),
        (("valid",), None, "$.valid"),
    ],
)
def test_a_wrong_value_is_refused_naming_its_path(
    path: tuple[Any, ...], value: Any, where: str
) -> None:
    text = _with(_golden("stub-in-process"), path, value)
    with pytest.raises(BodyError) as caught:
        decode_body(text)
    assert where in str(caught.value), caught.value
    assert list(receipt_body_validator().iter_errors(json.loads(text)))  # the schema too


def test_a_missing_field_is_refused_naming_it() -> None:
    body = _golden("stub-in-process")
    del body["cells"][2]["trades_sha256"]
    with pytest.raises(
        BodyError, match=r"missing required field `trades_sha256` - at `\$.cells\[2\]`"
    ):
        decode_body(canonical.dumps(body))


@pytest.mark.parametrize("raw", ["", "{", '{"run_id": ', b"\xff"])
def test_text_that_is_not_json_is_refused(raw: str | bytes) -> None:
    with pytest.raises(BodyError, match="not JSON"):
        decode_body(raw)


def test_the_schema_file_is_the_one_the_types_generate(tmp_path: Path) -> None:
    published = (Path(model.__file__).parent / "schemas" / SCHEMA_FILE).read_text("utf-8")
    assert published == schema_text(), "python -m harness.receipt.schemas writes it again"
    assert receipt_body_schema() == generate()
    assert write_schema(tmp_path).read_text("utf-8") == published


def test_every_object_of_the_schema_is_closed() -> None:
    open_objects = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            if node.get("properties") is not None and node.get("additionalProperties") is not False:
                open_objects.append(path)
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}/{i}")

    walk(generate(), "")
    assert open_objects == []
    assert generate()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_every_body_validates_under_the_schema(
    produced: dict[str, Any], unprobed: dict[str, Any]
) -> None:
    """The schema's objects are closed, so a body that validates holds no key it lacks."""
    for body in [*map(_golden, BODIES), produced, unprobed]:
        assert list(receipt_body_validator().iter_errors(body)) == []


def test_the_statuses_are_the_outcomes_words() -> None:
    assert get_args(model.CellStatus) == outcomes.CELL_STATUSES
    assert set(get_args(model.ProbeStatus)) == (
        set(outcomes.CELL_STATUSES) - {outcomes.ABORTED} | {outcomes.NOT_APPLICABLE}
    )
