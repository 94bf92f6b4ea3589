"""A run bound to a commitment: the windows the site picks for it, and whether a run is
what its binding says (the committed agent, trading only filings accepted after the
commitment, from a session opening after it), through ``forward_status`` and
``pit-harness verify``.

The release is small and written here: synthetic rows over two weeks of March 2023 plus
one adversarial filing, sent at 17:45 New York the evening of the commitment (before its
stamp) and so dated the next business day by EDGAR's 17:30 cut-off.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import textwrap
from datetime import date, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest

from harness import RunConfig, run
from harness.agents.external import command_agent
from harness.cli import main
from harness.forward.check import (
    ForwardStatus,
    accepted_after,
    accepted_by,
    business_day_before,
    commitment_instant,
    forward_status,
)
from harness.forward.log import (
    Commit,
    CommittedAgent,
    CommittedBenchmark,
    DeclaredModel,
    Entry,
    Withdraw,
    document,
    entry_digest,
    next_entry,
)
from harness.forward.windows import backtest_window, forward_window
from harness.receipt.build import receipt_text
from harness.release.bundle import Bundle
from harness.release.keys import synthetic_secret
from harness.release.store import write_release
from harness.release.synth import synth_rows
from harness.rundata.config import ConfigError

STAMP = "2023-03-08T23:00:00Z"  # 18:00 New York, Wednesday 8 March 2023
MOMENT = commitment_instant(STAMP)
LATE_ACCEPTANCE = "2023-03-08T17:45:00-05:00"  # before the stamp, dated 9 March


def _rows(adversarial: bool) -> list[dict[str, Any]]:
    rows = synth_rows(
        start=date(2023, 3, 1), end=date(2023, 3, 17), seed=7, rows=400, acceptance_fraction=0.5
    )
    # around the stamp, keep the synthetic rows unambiguous: from 9 March on, every row
    # accepted after the stamp; up to 8 March, every row accepted by it
    kept = [
        r
        for r in rows
        if (r["partition_date"] >= "2023-03-09") == accepted_after(r, MOMENT)
        and (r["partition_date"] <= "2023-03-08") == accepted_by(r, MOMENT)
    ]
    if adversarial:
        kept.append(
            {
                **kept[-1],
                "accession": "0000999999-23-000001",
                "form": "8-K",
                "title": "8-K - late filer 2023-03-09",
                "partition_date": "2023-03-09",
                "published_at": "2023-03-09",
                "acceptance_at": LATE_ACCEPTANCE,
                "filename": "edgar/data/999999/0000999999-23-000001.txt",
            }
        )
    return kept


def _release(out: Path, *, adversarial: bool) -> Path:
    write_release(
        out,
        name=f"forward-test-{adversarial}",
        rows=_rows(adversarial),
        window=("2023-03-01", "2023-03-17"),
        provenance="SYNTHETIC: written by the forward track's tests",
        source={"kind": "synthetic", "seed": 7},
        row_key_secret=synthetic_secret(7),
    )
    return out


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _release(tmp_path_factory.mktemp("forward") / "honest", adversarial=False)


@pytest.fixture(scope="module")
def adversarial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _release(tmp_path_factory.mktemp("forward") / "adversarial", adversarial=True)


# -- the windows ----------------------------------------------------------------------------


def test_the_forward_window_starts_at_the_first_session_after_the_commitment(
    honest: Path,
) -> None:
    assert forward_window(honest, STAMP) == ("2023-03-09", "2023-03-17")


def test_a_filing_dated_after_the_commitment_but_accepted_before_pushes_the_start_later(
    adversarial: Path,
) -> None:
    assert forward_window(adversarial, STAMP) == ("2023-03-10", "2023-03-17")


def test_a_session_must_open_after_the_stamp_even_when_its_rows_all_came_later(
    tmp_path: Path,
) -> None:
    base = _rows(False)[0]
    rows = [
        {
            **base,
            "accession": f"0000999999-23-00000{n}",
            "partition_date": day,
            "published_at": day,
            "acceptance_at": f"{day}T12:00:00-05:00",
        }
        for n, day in enumerate(("2023-03-01", "2023-03-02"))
    ]
    write_release(
        tmp_path / "tiny", name="tiny", rows=rows, window=("2023-03-01", "2023-03-02"),
        provenance="SYNTHETIC", source={"kind": "synthetic"}, row_key_secret=synthetic_secret(1),
    )  # fmt: skip
    # 09:45 New York on 1 March: its rows came at noon, but its bell rang at 09:30
    assert forward_window(tmp_path / "tiny", "2023-03-01T14:45:00Z") == ("2023-03-02", "2023-03-02")
    assert forward_window(tmp_path / "tiny", "2023-03-01T14:29:59Z") == ("2023-03-01", "2023-03-02")


def test_no_forward_window_when_the_release_ends_before_the_commitment(honest: Path) -> None:
    assert forward_window(honest, "2023-03-17T23:00:00Z") is None
    assert forward_window(honest, "2024-01-02T00:00:00Z") is None


def test_a_stamp_before_the_release_opens_its_first_session(honest: Path) -> None:
    assert forward_window(honest, "2023-02-01T00:00:00Z") == ("2023-03-01", "2023-03-17")
    # the first session's bell rings at 14:30Z; a stamp a second later misses it
    assert forward_window(honest, "2023-03-01T14:30:00Z")[0] != "2023-03-01"  # type: ignore[index]


def test_the_backtest_window_is_the_sessions_just_before_the_commitment(
    honest: Path, adversarial: Path
) -> None:
    assert backtest_window(honest, STAMP, 3) == ("2023-03-06", "2023-03-08")
    assert backtest_window(honest, STAMP, 6) == ("2023-03-01", "2023-03-08")
    assert backtest_window(honest, STAMP, 7) is None  # the release has six such sessions
    # the late filing dated 9 March existed by the stamp: 9 March is still not before it
    assert backtest_window(adversarial, STAMP, 3) == ("2023-03-06", "2023-03-08")


def test_a_dated_row_may_have_been_sent_from_the_evening_of_the_business_day_before() -> None:
    """EDGAR dates a filing sent after 17:30 with the next business day: a date alone is
    after a commitment only if even 17:30 on the business day before it is."""
    row = {"published_at": "2023-03-09", "acceptance_at": None}  # a Thursday
    evening = commitment_instant("2023-03-08T22:00:00Z")  # 17:00 New York on Wednesday
    assert accepted_after(row, evening) and not accepted_by(row, evening)
    late = commitment_instant("2023-03-08T23:00:00Z")  # 18:00: the row may be older
    assert not accepted_after(row, late) and not accepted_by(row, late)
    assert accepted_by(row, commitment_instant("2023-03-10T03:00:00Z"))  # 22:00 that day
    assert not accepted_by(row, commitment_instant("2023-03-10T02:59:59Z"))


def test_a_monday_s_date_may_have_been_sent_on_friday_evening_or_the_weekend() -> None:
    monday = {"published_at": "2026-01-12", "acceptance_at": None}
    saturday = commitment_instant("2026-01-10T15:00:00Z")
    assert not accepted_after(monday, saturday)
    friday_afternoon = commitment_instant("2026-01-09T21:00:00Z")  # 16:00 New York
    assert accepted_after(monday, friday_afternoon)


def test_after_a_federal_holiday_the_business_day_before_is_earlier() -> None:
    # Tuesday 2023-01-17 follows Martin Luther King Day: EDGAR's day before is Friday
    assert business_day_before(date(2023, 1, 17)) == date(2023, 1, 13)
    # Columbus Day (EDGAR closed, NYSE open): Tuesday 2023-10-10 follows Friday 10-06
    assert business_day_before(date(2023, 10, 10)) == date(2023, 10, 6)
    tuesday = {"published_at": "2023-01-17", "acceptance_at": None}
    assert not accepted_after(tuesday, commitment_instant("2023-01-14T12:00:00Z"))
    assert accepted_after(tuesday, commitment_instant("2023-01-13T22:00:00Z"))


# -- runs -----------------------------------------------------------------------------------

AGENT = """
import json, sys
for line in sys.stdin:
    task = json.loads(line)
    sys.stdout.write(json.dumps({"type": "tool", "tool": "pit_list", "args": {"limit": %d}}) + "\\n")
    sys.stdout.flush()
    rows = json.loads(sys.stdin.readline())["result"]["rows"]
    picks = [r["row_key"] for r in rows]
    sys.stdout.write(json.dumps({"type": "decision", "picks": picks, "text": ""}) + "\\n")
    sys.stdout.flush()
"""


def _agent(folder: Path, limit: int = 2) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "agent.py"
    path.write_text(textwrap.dedent(AGENT % limit))
    return f"{sys.executable} {path}"


# every binding a test makes names a real commitment: a two-entry log per agent digest
LOGS: dict[str, list[Entry]] = {}


@functools.cache
def _forms() -> tuple[str, ...]:
    return tuple(sorted({r["form"] for r in _rows(False)}))


def _log_for(agent_digest: str) -> list[Entry]:
    if agent_digest not in LOGS:
        bench = CommittedBenchmark(
            release="forward-test", release_digest="sha256:" + "0b" * 32, forms=_forms(),
            hold_sessions=5, clocks=("pit",), arms=("main", "redacted"),
        )  # fmt: skip
        agent = CommittedAgent(
            name="tested", digest=agent_digest, transport="stdio", dialect="pit", label="tested"
        )
        first = next_entry(
            None, stamped_at=STAMP,
            commit=Commit(agent=agent, benchmark=bench, model=DeclaredModel(), submitter="t"),
        )  # fmt: skip
        other = CommittedAgent(
            name="other", digest="sha256:" + "0c" * 32, transport="stdio", dialect="pit",
            label="other",
        )  # fmt: skip
        second = next_entry(
            first, stamped_at="2023-03-09T01:00:00Z",
            commit=Commit(agent=other, benchmark=bench, model=DeclaredModel(), submitter="u"),
        )  # fmt: skip
        LOGS[agent_digest] = [first, second]
    return LOGS[agent_digest]


def _binding(agent_digest: str, kind: str = "forward") -> dict[str, Any]:
    first, second = _log_for(agent_digest)
    return {
        "kind": kind,
        "entry": entry_digest(first),
        "seq": 1,
        "stamped_at": STAMP,
        "agent_digest": agent_digest,
        "log_head": {"seq": 2, "digest": entry_digest(second)},
    }


def _log(body: dict[str, Any]) -> list[Entry]:
    """The log a body's binding was made from (looked up by the entry it names)."""
    wanted = body["config"]["forward"]["entry"]
    return next(log for log in LOGS.values() if entry_digest(log[0]) == wanted)


def _status(body: dict[str, Any], bundle: Any, trajectory: Any) -> ForwardStatus:
    return forward_status(body, bundle, trajectory, _log(body))


def _log_file(body: dict[str, Any], folder: Path) -> str:
    path = folder / "commitments-log.json"
    path.write_text(json.dumps(document(_log(body))))
    return str(path)


def _run(
    release: Path, out: Path, command: str, window: tuple[str, str], forward: dict[str, Any] | None
) -> Path:
    spec = command_agent(command)
    config = RunConfig(
        bundle_path=str(release),
        start=window[0],
        end=window[1],
        arms=("main", "redacted"),
        clocks=("pit",),
        agent_cmd=command,
        agent_process="in_process",
        probe=0,
        forward=forward,
        trajectory_path=str(out / "trajectory.jsonl"),
        receipt_path=str(out / "receipt.json"),
    )
    run(spec, config)
    return out


def _digest(command: str) -> str:
    assert command_agent(command).external is not None
    return command_agent(command).external.digest()  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def forward_run(honest: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("forward-run")
    command = _agent(folder / "agent")
    window = forward_window(honest, STAMP)
    assert window is not None
    return _run(honest, folder / "out", command, window, _binding(_digest(command)))


def _body(out: Path) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((out / "receipt.json").read_text())["body"]
    return body


def test_a_committed_agent_run_after_the_commitment_is_forward(
    forward_run: Path, honest: Path
) -> None:
    body = _body(forward_run)
    assert body["config"]["forward"]["stamped_at"] == STAMP
    assert sum(c["trades"] for c in body["cells"]) > 0  # it traded, in both arms
    assert all(c["trades"] > 0 for c in body["cells"])
    status = _status(body, honest, forward_run / "trajectory.jsonl")
    assert (status.status, status.problems) == ("forward", [])


def test_the_cell_records_a_run_is_assembled_from_give_the_same_verdict(
    forward_run: Path, honest: Path
) -> None:
    from harness.runs.records import CellRecord

    lines = (forward_run / "trajectory.jsonl").read_text().splitlines()
    by_cell: dict[tuple[str, str], list[str]] = {}
    for line in lines[1:]:
        event = json.loads(line)
        if "arm" in event:
            by_cell.setdefault((event["arm"], event["clock"]), []).append(line)
    records = [
        CellRecord(arm=arm, clock=clock, config_sha256="", events="\n".join(cell), outcome={},
                   ledger=[], egress=[], model_exchanges={}, served=[], capabilities={})
        for (arm, clock), cell in by_cell.items()
    ]  # fmt: skip
    assert len(records) == 2
    assert _status(_body(forward_run), honest, records).status == "forward"
    # the other agent's picks, the same way: a record is read, never skipped
    early = next(r for r in Bundle.load(honest).rows("main") if r["partition_date"] < "2023-03-08")
    extra = json.dumps(
        {"event": "decision", "arm": "main", "clock": "pit", "picks": [early["row_key"]]}
    )
    records[0] = msgspec.structs.replace(records[0], events=records[0].events + "\n" + extra)
    assert (
        _status(_body(forward_run), Bundle.load(honest), records)
        .problems[0]
        .startswith(f"accepted_before_commitment: row {early['row_key']} (main/pit) ")
    )


def test_verify_says_forward_ok(
    forward_run: Path, honest: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = _body(forward_run)
    code = main(
        ["verify", str(forward_run / "receipt.json"), "--trajectory",
         str(forward_run / "trajectory.jsonl"), "--bundle", str(honest),
         "--log", _log_file(body, tmp_path)]
    )  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert code == 0, out
    assert out[-2] == "scores re-derived ok"
    entry = body["config"]["forward"]["entry"]
    assert out[-1] == f"forward ok  committed {STAMP} entry {entry}"


def test_verify_without_the_log_leaves_the_claim_unresolved(
    forward_run: Path, honest: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["verify", str(forward_run / "receipt.json"), "--trajectory",
         str(forward_run / "trajectory.jsonl"), "--bundle", str(honest)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "scores re-derived ok" in out and "forward ok" not in out
    assert "forward UNRESOLVED" in out and "--log" in out


def test_a_binding_the_log_does_not_hold_is_not_forward(
    forward_run: Path, honest: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A made-up commitment: the run names an entry digest and a stamp no log holds."""
    body = _body(forward_run)
    other = _log_for("sha256:" + "0d" * 32)  # a real log, of another agent's commitment
    status = forward_status(body, honest, forward_run / "trajectory.jsonl", other)
    assert status.status == "not_forward"
    assert status.problems[0].startswith("not_in_the_log: entry 1 is not the commitment")
    path = tmp_path / "other-log.json"
    path.write_text(json.dumps(document(other)))
    code = main(
        ["verify", str(forward_run / "receipt.json"), "--trajectory",
         str(forward_run / "trajectory.jsonl"), "--bundle", str(honest), "--log", str(path)]
    )  # fmt: skip
    assert code == 1 and "forward no  not_in_the_log" in capsys.readouterr().out


def test_a_commitment_withdrawn_by_the_head_it_names_is_not_forward(
    forward_run: Path, honest: Path
) -> None:
    body = _body(forward_run)
    first, second = _log(body)
    withdrawal = next_entry(
        second, stamped_at="2023-03-09T02:00:00Z",
        withdraw=Withdraw(withdraws=1, entry=entry_digest(first), reason="r", submitter="t"),
    )  # fmt: skip
    log = [first, second, withdrawal]
    # withdrawn after the head the run names: the run was queued while it was live
    assert forward_status(body, honest, forward_run / "trajectory.jsonl", log).status == "forward"
    body["config"]["forward"]["log_head"] = {"seq": 3, "digest": entry_digest(withdrawal)}
    status = forward_status(body, honest, forward_run / "trajectory.jsonl", log)
    assert status.problems == ["withdrawn: entry 3 withdrew commitment 1"]


def test_a_run_of_another_benchmark_than_the_committed_is_not_forward(
    forward_run: Path, honest: Path
) -> None:
    body = _body(forward_run)
    body["config"]["hold_sessions"] = 1
    status = forward_status(body, honest, forward_run / "trajectory.jsonl", _log(body))
    assert status.problems == ["benchmark_differs: the run's hold_sessions 1, the commitment's 5"]


def test_a_traded_row_accepted_before_the_commitment_is_not_forward(
    forward_run: Path, adversarial: Path
) -> None:
    # The same receipt, its window chosen as a naive scheduler would (the first session
    # after the stamp's date), over the release that also holds the late filing, and its
    # records with one more pick in the redacted arm: the late filing, by that arm's key.
    # Whatever the arm calls it, it is the main arm's row, and it existed by the stamp.
    release = Bundle.load(adversarial, start="2023-03-09", end="2023-03-17")
    late = next(r for r in release.rows("main") if r["acceptance_at"] == LATE_ACCEPTANCE)
    redacted_key = {m: r for r, m in release.to_main("redacted").items()}[late["row_key"]]
    events = [
        json.loads(line) for line in (forward_run / "trajectory.jsonl").read_text().splitlines()
    ]
    decision = next(e for e in events if e.get("event") == "decision" and e["arm"] == "redacted")
    decision["picks"] = [*decision["picks"], redacted_key]
    body = _body(forward_run)
    assert _status(body, adversarial, forward_run / "trajectory.jsonl").status == "forward"
    status = _status(body, adversarial, events)
    assert (status.status, status.problems) == (
        "not_forward",
        [
            f"accepted_before_commitment: row {late['row_key']} (redacted/pit) accepted "
            "2023-03-08T22:45:00Z"
        ],
    )


def test_a_run_of_another_agent_is_not_forward(
    forward_run: Path, honest: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = _agent(tmp_path / "other", limit=1)
    committed = _digest(_agent(tmp_path / "committed", limit=2))
    window = forward_window(honest, STAMP)
    assert window is not None
    out = _run(honest, tmp_path / "out", command, window, _binding(committed))
    status = _status(_body(out), honest, out / "trajectory.jsonl")
    assert status.status == "not_forward"
    assert status.problems == [
        f"agent_digest_differs: the run's agent is {_digest(command)}, the commitment's is {committed}"
    ]
    code = main(
        ["verify", str(out / "receipt.json"), "--trajectory", str(out / "trajectory.jsonl"),
         "--bundle", str(honest), "--log", _log_file(_body(out), tmp_path)]
    )  # fmt: skip
    printed = capsys.readouterr().out.splitlines()
    assert code == 1
    assert "scores re-derived ok" in printed  # the run itself is sound
    assert printed[-2].startswith("forward no  agent_digest_differs: ")
    assert "not a forward run of the commitment" in printed[-1]


def test_a_window_opening_before_the_commitment_is_not_forward(
    forward_run: Path, honest: Path, tmp_path: Path
) -> None:
    command = _agent(tmp_path / "agent")
    out = _run(
        honest, tmp_path / "out", command, ("2023-03-06", "2023-03-10"), _binding(_digest(command))
    )
    problems = _status(_body(out), honest, out / "trajectory.jsonl").problems
    assert any(p.startswith("accepted_before_commitment: row ") for p in problems)
    assert problems[-1] == (
        "window_opens_before_commitment: the window's first session 2023-03-06 opens at "
        f"2023-03-06T14:30:00Z, not after the commitment's stamp {STAMP}"
    )


def test_a_backtest_before_the_commitment_holds_and_one_after_does_not(
    honest: Path, tmp_path: Path
) -> None:
    command = _agent(tmp_path / "agent")
    window = backtest_window(honest, STAMP, 3)
    assert window is not None
    out = _run(honest, tmp_path / "before", command, window, _binding(_digest(command), "backtest"))
    assert _status(_body(out), honest, out / "trajectory.jsonl").status == "backtest"
    late = _run(
        honest, tmp_path / "late", command, ("2023-03-08", "2023-03-09"),
        _binding(_digest(command), "backtest"),
    )  # fmt: skip
    status = _status(_body(late), honest, late / "trajectory.jsonl")
    assert status.status == "not_backtest"
    assert status.problems[0].startswith("accepted_after_commitment: row ")
    assert all(p.startswith("accepted_after_commitment: ") for p in status.problems)


def test_an_ordinary_run_is_not_bound(forward_run: Path, honest: Path) -> None:
    body = _body(forward_run)
    del body["config"]["forward"]
    assert forward_status(body, honest, forward_run / "trajectory.jsonl").status == "not_bound"


def test_an_edited_forward_binding_fails_the_config_hash(
    forward_run: Path, honest: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    receipt = json.loads((forward_run / "receipt.json").read_text())
    body = receipt["body"]
    body["config"]["forward"]["stamped_at"] = "2023-03-01T00:00:00Z"  # an earlier commitment
    forged = tmp_path / "receipt.json"
    forged.write_text(receipt_text(body, receipt["emitted_at"]))  # body_sha256 made to fit
    code = main(
        ["verify", str(forged), "--trajectory", str(forward_run / "trajectory.jsonl"),
         "--bundle", str(honest)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "its config does not hash to config_sha256" in out
    assert "forward ok" not in out


def test_a_forward_binding_is_validated_naming_its_key(tmp_path: Path) -> None:
    good = _binding("sha256:" + "a1" * 32)
    base = {"bundle_path": str(tmp_path), "agent_cmd": "agent"}
    assert RunConfig.from_dict({**base, "forward": good}).forward is not None
    for change, key in (
        ({"kind": "sideways"}, "forward.kind"),
        ({"entry": "sha256:XY"}, "forward.entry"),
        ({"seq": 0}, "forward.seq"),
        ({"seq": True}, "forward.seq"),
        ({"stamped_at": "2023-03-08 23:00:00"}, "forward.stamped_at"),
        ({"stamped_at": "2023-02-30T23:00:00Z"}, "forward.stamped_at"),
        ({"agent_digest": None}, "forward.agent_digest"),
        ({"log_head": {"seq": 6}}, "forward.log_head"),
        ({"seq": 3}, "forward.log_head.seq"),  # a head before the entry it names
        ({"extra": 1}, "forward: unknown key(s) extra"),
    ):
        with pytest.raises(ConfigError, match=re.escape(key)):
            RunConfig.from_dict({**base, "forward": {**good, **change}})
    with pytest.raises(ConfigError, match=r"forward\.entry: required"):
        RunConfig.from_dict({**base, "forward": {k: v for k, v in good.items() if k != "entry"}})
    with pytest.raises(ConfigError, match="an HTTP agent runs no commitment"):
        RunConfig.from_dict(
            {"bundle_path": str(tmp_path), "agent_http": "https://agents.example.com/a",
             "forward": good}
        )  # fmt: skip


def test_an_ordinary_config_has_no_forward_key() -> None:
    config = RunConfig(bundle_path="release")
    body = config.scoring_body(
        start="2023-03-01", end="2023-03-02", forms=("8-K",), agent_process="in_process",
        agent="stub", agent_source_sha256=None, prices=None,
    )  # fmt: skip
    assert "forward" not in body


def test_the_session_bell_is_new_york_time_in_utc() -> None:
    assert commitment_instant(STAMP) == datetime.fromisoformat("2023-03-08T18:00:00-05:00")


def test_a_binding_of_no_known_kind_is_no_claim_that_holds(forward_run: Path, honest: Path) -> None:
    body = _body(forward_run)
    body["config"]["forward"]["kind"] = "sideways"
    status = forward_status(body, honest, forward_run / "trajectory.jsonl", _log(body))
    assert status.status == "not_forward"
    assert status.problems == ["not_a_binding: config.forward is not a binding (kind 'sideways')"]


def test_priced_through_is_the_exit_of_a_trade_entered_after_the_last_day() -> None:
    from harness.forward.windows import priced_through

    # Friday 2023-03-10: entered Monday 03-13, five sessions on is Monday 03-20
    assert priced_through("2023-03-10", 5) == "2023-03-20"
    # a Saturday end: the first session after it is Monday 03-13 still
    assert priced_through("2023-03-11", 5) == "2023-03-20"
    # Good Friday 2023-04-07 is no session: after Thursday 04-06 comes Monday 04-10
    assert priced_through("2023-04-06", 1) == "2023-04-11"
