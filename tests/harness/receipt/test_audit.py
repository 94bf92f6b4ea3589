"""The reasoning audit: what an agent wrote on the control arms, scanned for what they hide."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import RunConfig, canonical, run
from harness.agents import stub
from harness.agents.base import AgentSpec
from harness.receipt.audit import (
    EXCERPTS_PER_CELL,
    AuditError,
    TrajectoryFormatError,
    audit_bytes,
    audit_digest,
    reasoning_audit,
    run_bundle,
)
from harness.release.bundle import Bundle
from harness.vocabulary import ARMS
from tests.support.planted import date_planter, issuer_namer

WINDOW = {"forms": ["8-K"], "start": "2023-03-01", "end": "2023-03-10"}


def ran(release: Path, out: Path, agent: AgentSpec, **config: Any) -> Path:
    """A run of ``agent`` over the 8-Ks of 1-10 March 2023; its trajectory."""
    run(
        agent,
        RunConfig(
            bundle_path=str(release),
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-10",
            agent_process="in_process",
            trajectory_path=str(out / "trajectory.jsonl"),
            receipt_path=str(out / "receipt.json"),
            **config,
        ),
    )
    return out / "trajectory.jsonl"


def audited(release: Path, trajectory: Path) -> dict[str, Any]:
    return reasoning_audit(trajectory, run_bundle(release, trajectory))


def cell(artifact: dict[str, Any], arm: str, clock: str) -> dict[str, Any]:
    found = [c for c in artifact["cells"] if (c["arm"], c["clock"]) == (arm, clock)]
    assert len(found) == 1, artifact["cells"]
    return found[0]


def events(trajectory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trajectory.read_text().splitlines()]


# -- runs ---------------------------------------------------------------------------------


def test_a_stub_run_audits_to_no_findings(march_release: Path, tmp_path: Path) -> None:
    trajectory = ran(march_release, tmp_path, stub())
    artifact = audited(march_release, trajectory)
    assert [(c["arm"], c["clock"]) for c in artifact["cells"]] == [
        *((arm, clock) for arm in ("redacted", "shifted") for clock in ("leaky", "dump", "pit")),
        ("shifted", "probe"),
    ]
    # the stub wrote something on every control cell and was served rows there
    assert all(c["texts"] > 0 and c["rows_served"] > 0 for c in artifact["cells"])
    assert artifact["totals"] == {
        "texts": sum(c["texts"] for c in artifact["cells"]),
        "date_hits": 0,
        "issuer_hits": 0,
        "cells_with_hits": 0,
        "unscanned_responses": 0,
    }
    assert all(c["excerpts"] == [] for c in artifact["cells"])
    assert artifact["scope"].startswith("Scanned: on the redacted and shifted arms")
    assert artifact["not_scanned"].startswith("Not scanned: the main arm")
    assert (
        artifact["trajectory_sha256"]
        == "sha256:" + hashlib.sha256(trajectory.read_bytes()).hexdigest()
    )
    assert artifact["bundle_content_digest"] == Bundle.load(march_release).content_digest


def test_a_real_date_written_on_the_shifted_arm_is_found(
    march_release: Path, tmp_path: Path
) -> None:
    trajectory = ran(march_release, tmp_path, date_planter())
    artifact = audited(march_release, trajectory)
    bundle = run_bundle(march_release, trajectory)
    real = {
        shifted: {
            main["partition_date"],
            main["published_at"][:10],
            (main["acceptance_at"] or "")[:10],
        }
        for shifted, main in zip(bundle.row_keys("shifted"), bundle.rows("main"), strict=True)
    }
    for clock in ("leaky", "dump", "pit", "probe"):
        found = cell(artifact, "shifted", clock)
        assert found["date_hits"] > 0 and found["issuer_hits"] == 0
        for excerpt in found["excerpts"]:
            assert excerpt["kind"] == "date"
            assert excerpt["source"] == ("probe_answer" if clock == "probe" else "decision")
            # a real date of a row the cell was served, named by that arm's key
            assert excerpt["truth"] == excerpt["matched"] in real[excerpt["row_key"]]
            assert excerpt["matched"] in excerpt["excerpt"]
    # a bare year of the real period is no finding: one hit per text, its date
    shifted_pit = cell(artifact, "shifted", "pit")
    written = [
        e
        for e in events(trajectory)
        if e["event"] == "decision" and e["clock"] == "pit" and e["arm"] == "shifted"
    ]
    assert shifted_pit["date_hits"] == sum(1 for e in written if "filed on" in e["text"])
    assert artifact["totals"]["cells_with_hits"] == 4


def test_the_same_date_on_main_or_redacted_is_no_finding(
    march_release: Path, tmp_path: Path
) -> None:
    trajectory = ran(march_release, tmp_path, date_planter())
    artifact = audited(march_release, trajectory)
    # the agent wrote the real date on main and on redacted too (both arms show it)
    decisions = [e for e in events(trajectory) if e["event"] == "decision"]
    assert any(e["arm"] == "main" and "filed on 2023-03-" in e["text"] for e in decisions)
    assert any(e["arm"] == "redacted" and "filed on 2023-03-" in e["text"] for e in decisions)
    assert "main" not in {c["arm"] for c in artifact["cells"]}
    for clock in ("leaky", "dump", "pit"):
        assert cell(artifact, "redacted", clock)["date_hits"] == 0
    assert artifact["totals"]["date_hits"] == sum(
        cell(artifact, "shifted", clock)["date_hits"] for clock in ("leaky", "dump", "pit", "probe")
    )


def test_an_issuer_named_on_redacted_is_found_and_on_shifted_is_not(
    march_release: Path, tmp_path: Path
) -> None:
    bundle = Bundle.load(march_release, **WINDOW)  # type: ignore[arg-type]
    main = bundle.rows("main")
    memory = {
        key: str(row["issuer"])
        for arm in ARMS
        for key, row in zip(bundle.row_keys(arm), main, strict=True)
    }
    trajectory = ran(march_release, tmp_path, issuer_namer(memory))
    artifact = audited(march_release, trajectory)
    for clock in ("leaky", "dump", "pit"):
        found = cell(artifact, "redacted", clock)
        assert found["issuer_hits"] > 0 and found["date_hits"] == 0
        for excerpt in found["excerpts"]:
            assert excerpt["kind"] == "issuer" and excerpt["how"] == "name"
            assert excerpt["truth"] == memory[excerpt["row_key"]]
            assert excerpt["matched"].lower() in excerpt["excerpt"].lower()
        # the shifted arm shows the issuer: naming it there is no finding
        assert cell(artifact, "shifted", clock)["issuer_hits"] == 0
    named_on_shifted = [
        e
        for e in events(trajectory)
        if e["event"] == "decision" and e["arm"] == "shifted" and "This one is" in e["text"]
    ]
    assert named_on_shifted


def test_two_audits_give_the_same_bytes_and_digest(march_release: Path, tmp_path: Path) -> None:
    trajectory = ran(march_release, tmp_path, date_planter())
    first, second = audited(march_release, trajectory), audited(march_release, trajectory)
    assert audit_bytes(first) == audit_bytes(second)
    assert audit_digest(first) == audit_digest(second)
    assert audit_digest(first) == "sha256:" + hashlib.sha256(audit_bytes(first)).hexdigest()
    assert json.loads(audit_bytes(first)) == first  # plain data: it reads back as it was


# -- trajectories written by hand ---------------------------------------------------------


@pytest.fixture(scope="module")
def bundle(march_release: Path) -> Bundle:
    return Bundle.load(march_release, **WINDOW)  # type: ignore[arg-type]


Write = Callable[[list[dict[str, Any]]], Path]


@pytest.fixture()
def write(bundle: Bundle, tmp_path: Path) -> Write:
    """A trajectory of these events after a run_start on ``bundle``."""

    def writing(written: list[dict[str, Any]], name: str = "trajectory.jsonl") -> Path:
        start = {
            "event": "run_start",
            "run_id": "hand-written",
            "bundle": {"name": bundle.name, "content_digest": bundle.content_digest},
            "config": WINDOW,
        }
        lines = [start, *written]
        path = tmp_path / name
        path.write_text(
            "".join(canonical.line({**e, "seq": n}) + "\n" for n, e in enumerate(lines))
        )
        return path

    return writing


def row(bundle: Bundle, arm: str, n: int) -> tuple[str, dict[str, Any]]:
    """The n-th row's key on ``arm`` and its main-arm row."""
    return bundle.row_keys(arm)[n], bundle.rows("main")[n]


def served_cell(
    arm: str, clock: str, keys: list[str], *inside: dict[str, Any]
) -> list[dict[str, Any]]:
    return [
        {"event": "cell_start", "arm": arm, "clock": clock},
        {
            "event": "tool_call",
            "arm": arm,
            "clock": clock,
            "tool": "pit_list",
            "args": {"limit": 5},
            "result": {"rows": [{"row_key": k} for k in keys]},
        },
        *inside,
        {"event": "cell_end", "arm": arm, "clock": clock},
    ]


def decision(arm: str, clock: str, text: str) -> dict[str, Any]:
    return {"event": "decision", "arm": arm, "clock": clock, "picks": [], "text": text}


def other_day(bundle: Bundle, day: str) -> int:
    """A row whose partition date is not ``day``."""
    return next(n for n, r in enumerate(bundle.rows("main")) if r["partition_date"] != day)


def test_only_the_rows_a_cell_was_served_count(bundle: Bundle, write: Write) -> None:
    key, main = row(bundle, "shifted", 0)
    stranger = bundle.rows("main")[other_day(bundle, main["partition_date"])]
    real = date.fromisoformat(main["partition_date"])
    path = write(
        served_cell(
            "shifted",
            "pit",
            [key],
            decision("shifted", "pit", f"{real:%B} {real.day}, {real.year} it was"),
            decision("shifted", "pit", f"or {stranger['partition_date']}, a day it was not served"),
            decision("shifted", "pit", f"or {real.year + 10}-{real:%m-%d}, the day it was shown"),
            decision("shifted", "pit", f"or just {real.year}"),
        )
    )
    found = cell(reasoning_audit(path, bundle), "shifted", "pit")
    assert (found["texts"], found["rows_served"], found["date_hits"]) == (4, 1, 1)
    [excerpt] = found["excerpts"]
    assert excerpt["how"] == "month_day_year_name" and excerpt["truth"] == real.isoformat()
    assert excerpt["seq"] == 3 and excerpt["row_key"] == key


def test_model_responses_are_read_as_the_model_wrote_them(bundle: Bundle, write: Write) -> None:
    key, main = row(bundle, "shifted", 0)
    day = main["partition_date"]
    answer = {
        "id": "chatcmpl-1",
        "model": f"a-model-{day}",  # a date in the model's name is none the model wrote
        "choices": [{"message": {"role": "assistant", "content": f"Real filing day: {day}."}}],
    }
    stream = "".join(
        "data: " + json.dumps({"id": "c", "choices": [{"delta": {"content": piece}}]}) + "\n\n"
        for piece in ["filed ", day[:4], day[4:7], day[7:], " then"]
    )
    metadata_only = {"id": "x", "model": f"m-{day}", "choices": [{"message": {"content": "ok"}}]}
    exchanges = [
        {"event": "model_exchange", "response_body": {"text": json.dumps(answer)}},
        {"event": "model_exchange", "response_body": {"text": stream + "data: [DONE]\n\n"}},
        {"event": "model_exchange", "response_body": {"text": json.dumps(metadata_only)}},
        {
            "event": "model_exchange",
            "response_body": {"base64": base64.b64encode(b"\xff").decode()},
        },
    ]
    found = cell(
        reasoning_audit(write(served_cell("shifted", "dump", [key], *exchanges)), bundle),
        "shifted",
        "dump",
    )
    assert (found["texts"], found["date_hits"], found["unscanned_responses"]) == (3, 2, 1)
    assert [e["source"] for e in found["excerpts"]] == ["model_response", "model_response"]
    assert [e["seq"] for e in found["excerpts"]] == [3, 4]


def test_a_search_for_the_hidden_issuer_is_found(bundle: Bundle, write: Write) -> None:
    n = next(i for i, r in enumerate(bundle.rows("main")) if r["ticker"] and len(r["ticker"]) > 1)
    key, main = row(bundle, "redacted", n)
    search = {
        "event": "tool_call",
        "arm": "redacted",
        "clock": "leaky",
        "tool": "pit_search",
        "args": {"query": f"news on {main['ticker']}", "limit": 5},
        "result": {"rows": []},
    }
    path = write(served_cell("redacted", "leaky", [key], search))
    found = cell(reasoning_audit(path, bundle), "redacted", "leaky")
    [excerpt] = found["excerpts"]
    assert (excerpt["source"], excerpt["kind"], excerpt["how"]) == (
        "search_query",
        "issuer",
        "ticker",
    )
    assert excerpt["truth"] == excerpt["matched"] == main["ticker"]
    assert found["date_hits"] == 0


def test_the_probe_is_a_cell_of_its_own(bundle: Bundle, write: Write) -> None:
    shown, main = row(bundle, "shifted", 3)
    probe = {
        "event": "probe_item",
        "item": 0,
        "row_key": shown,
        "answer": f"Filed {main['partition_date']}.",
    }
    path = write([*served_cell("shifted", "pit", []), probe])
    artifact = reasoning_audit(path, bundle)
    assert cell(artifact, "shifted", "pit")["date_hits"] == 0
    found = cell(artifact, "shifted", "probe")
    assert (found["rows_served"], found["date_hits"]) == (1, 1)
    assert found["excerpts"][0]["source"] == "probe_answer"


def test_excerpts_are_capped_and_counts_kept_whole(bundle: Bundle, write: Write) -> None:
    key, main = row(bundle, "shifted", 0)
    said = [decision("shifted", "leaky", f"day {main['partition_date']}") for _ in range(70)]
    # the same date twice in one text is one finding
    said.append(
        decision("shifted", "leaky", f"{main['partition_date']} and {main['partition_date']}")
    )
    artifact = reasoning_audit(write(served_cell("shifted", "leaky", [key], *said)), bundle)
    found = cell(artifact, "shifted", "leaky")
    assert found["date_hits"] == 71 == artifact["totals"]["date_hits"]
    assert len(found["excerpts"]) == EXCERPTS_PER_CELL
    assert [e["seq"] for e in found["excerpts"]] == list(range(3, 3 + EXCERPTS_PER_CELL))


def test_what_is_no_trajectory_is_refused(bundle: Bundle, write: Write, tmp_path: Path) -> None:
    for text in ["", "not json\n", "[1, 2]\n", '{"event": "decision"}\n']:
        path = tmp_path / "t.jsonl"
        path.write_text(text)
        with pytest.raises(TrajectoryFormatError, match="not a pit-harness trajectory"):
            reasoning_audit(path, bundle)
    good = write(served_cell("shifted", "pit", []))
    with good.open("a") as handle:
        handle.write("{broken\n")
    with pytest.raises(TrajectoryFormatError, match="line 5 is not JSON"):
        reasoning_audit(good, bundle)


def test_another_release_or_window_is_refused(
    bundle: Bundle, write: Write, march_release: Path
) -> None:
    key, _ = row(bundle, "shifted", 0)
    path = write(served_cell("shifted", "pit", [key]))
    text = path.read_text().replace(bundle.content_digest, "sha256:" + "0" * 64)
    path.write_text(text)
    with pytest.raises(AuditError, match="run on release sha256:0000"):
        reasoning_audit(path, bundle)
    # a row the run served that the release given does not hold in its window
    narrow = Bundle.load(march_release, forms=["8-K"], start="2023-03-01", end="2023-03-01")
    late = next(n for n, r in enumerate(bundle.rows("main")) if r["partition_date"] > "2023-03-01")
    path = write(served_cell("shifted", "pit", [bundle.row_keys("shifted")[late]]))
    with pytest.raises(AuditError, match="not the release or window the run used"):
        reasoning_audit(path, narrow)


# -- the issuer index tries fewer issuers, and finds what trying every one finds ----------

IDENTITIES = [
    ("Acme Holdings Inc", "ACME"),
    ("The Acme Company", None),
    ("First Solar Corp", "FSLR"),
    ("First Republic Bank", "FRC"),
    ("Berkshire Hathaway Inc", "BRK.B"),
    ("Agilent Technologies", "A"),
    (None, "X"),
    ("Inc", "-Q"),
]
PIECES = ["Acme", "acme", "Holdings", "First", "Solar", "Republic", "Bank", "Berkshire",
          "Hathaway", "BRK.B", "BRK", "$A", "(A)", "ticker: X", "ACME", "FSLR", "-Q", "Agilent",
          "Technologies", " ", ", ", "\n", "the", "İ"]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_the_issuer_index_finds_what_trying_every_issuer_finds(text: str) -> None:
    from harness.receipt.audit import _Issuers
    from harness.rundata.probe_scoring import issuer_span

    index = _Issuers()
    for n, (issuer, ticker) in enumerate(IDENTITIES):
        index.add(issuer, ticker, f"r-{n}")
    found = [identity for identity, *_ in index.named_in(text)]
    assert found == [i for i in IDENTITIES if issuer_span(text, *i) is not None]


def test_a_decision_refused_under_a_rate_limit_is_scanned_too(bundle: Bundle, write: Write) -> None:
    """A fault plan's refused presentation keeps what the agent said: a real date written
    there, and then restated differently, is still found."""
    key, main = row(bundle, "shifted", 0)
    refused = {
        "event": "presentation_refused", "arm": "shifted", "clock": "pit", "picks": [key],
        "text": f"the real day was {main['partition_date']}",
    }  # fmt: skip
    path = write(served_cell("shifted", "pit", [key], refused, decision("shifted", "pit", "")))
    found = cell(reasoning_audit(path, bundle), "shifted", "pit")
    assert (found["texts"], found["date_hits"]) == (1, 1)
