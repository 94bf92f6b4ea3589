"""The commitment log: appended and verified, and every way of rewriting it refused, naming
the entry at fault (edited, removed, reordered, backdated, a forged withdrawal, a head a
reader kept that the log no longer holds)."""

from __future__ import annotations

import contextlib
import copy
from datetime import UTC, datetime, timedelta, timezone
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.forward.log import (
    Answers,
    Commit,
    CommittedAgent,
    CommittedBenchmark,
    DeclaredModel,
    Entry,
    LogError,
    Withdraw,
    document,
    entry_digest,
    head_of,
    live_commitments,
    next_entry,
    parse_entry,
    stamp,
    verify_log,
)

DIGEST = "sha256:" + "ab" * 32


def commit(name: str = "mean-reverter", digest: str = DIGEST) -> Commit:
    return Commit(
        agent=CommittedAgent(
            name=name, digest=digest, transport="stdio", dialect="pit", label="v1"
        ),
        benchmark=CommittedBenchmark(
            release="edgar-8k",
            release_digest="sha256:" + "cd" * 32,
            forms=("8-K",),
            hold_sessions=5,
            clocks=("pit",),
            arms=("main", "shifted"),
        ),
        model=DeclaredModel(model_version="m-1", training_cutoff="2023-01-01"),
        submitter="ada",
    )


def withdraw(target: Entry, reason: str = "retired") -> Withdraw:
    return Withdraw(
        withdraws=target.seq, entry=entry_digest(target), reason=reason, submitter="ada"
    )


def build(*stamps: str) -> list[Entry]:
    """A log of commits, one per stamp."""
    entries: list[Entry] = []
    for n, at in enumerate(stamps):
        previous = entries[-1] if entries else None
        entries.append(next_entry(previous, stamped_at=at, commit=commit(f"agent-{n}")))
    return entries


def append_withdrawal(entries: list[Entry], target: int, at: str) -> list[Entry]:
    return [
        *entries,
        next_entry(entries[-1], stamped_at=at, withdraw=withdraw(entries[target - 1])),
    ]


STAMPS = ("2026-01-05T14:00:00Z", "2026-01-06T09:00:00Z", "2026-01-06T09:00:00Z")


@pytest.fixture()
def log() -> dict[str, Any]:
    entries = append_withdrawal(build(*STAMPS), 2, "2026-01-07T10:00:00Z")
    return document(entries)


def refused(log: dict[str, Any], *, heads: tuple[str, ...] = ()) -> str:
    with pytest.raises(LogError) as caught:
        verify_log(log, heads=heads)
    return str(caught.value)


def rechain(raw: list[dict[str, Any]], *, as_forged: int = 0) -> dict[str, Any]:
    """Entries re-linked after a change (every prev, and every withdrawal's digest of its
    target, recomputed; but entry ``as_forged``'s, left as given) and the head made to
    fit: what a forger who rewrites the whole log publishes."""
    out: list[dict[str, Any]] = []
    for entry in raw:
        entry = dict(entry, prev=entry_digest(out[-1]) if out else None)
        target = (entry.get("withdraw") or {}).get("withdraws", 0)
        if entry["seq"] != as_forged and 1 <= target <= len(out):
            entry["withdraw"] = dict(entry["withdraw"], entry=entry_digest(out[target - 1]))
        out.append(entry)
    last = out[-1]
    return {
        "log": "pitweb-commitments/1",
        "entries": out,
        "head": {"seq": last["seq"], "digest": entry_digest(last)},
    }


# -- appended and verified ----------------------------------------------------------------


def test_an_appended_log_verifies_and_its_head_is_its_last_entry(log: dict[str, Any]) -> None:
    entries = verify_log(log)
    assert [e.seq for e in entries] == [1, 2, 3, 4]
    assert entries[0].prev is None
    assert all(b.prev == entry_digest(a) for a, b in pairwise(entries))
    assert log["head"] == {"seq": 4, "digest": entry_digest(entries[-1])}
    assert verify_log(log, heads=[f"2:{entry_digest(entries[1])}", entry_digest(entries[0])])


def test_the_empty_log_verifies_with_an_empty_head() -> None:
    assert verify_log(document([])) == []
    assert head_of([]).digest is None


def test_a_withdrawn_commitment_stays_in_the_log_and_is_not_live(log: dict[str, Any]) -> None:
    entries = verify_log(log)
    assert [e.seq for e in live_commitments(entries)] == [1, 3]
    assert entries[1].kind == "commit"  # still there, never erased


def test_a_digest_covers_every_field_and_the_previous_digest() -> None:
    first = build(STAMPS[0])[0]
    plain = document([first])["entries"][0]
    assert entry_digest(first) == entry_digest(plain)
    assert entry_digest(dict(plain, prev=DIGEST)) != entry_digest(plain)


def test_stamp_is_utc_whole_seconds_and_refuses_a_naive_time() -> None:
    new_york = timezone(timedelta(hours=-5))
    assert stamp(datetime(2026, 1, 5, 9, 0, 0, 900_000, tzinfo=new_york)) == "2026-01-05T14:00:00Z"
    with pytest.raises(LogError, match="aware"):
        stamp(datetime(2026, 1, 5, 9, 0))


def test_next_entry_refuses_a_clock_going_backwards() -> None:
    (first,) = build("2026-01-05T14:00:00Z")
    with pytest.raises(LogError, match="never goes backwards"):
        next_entry(first, stamped_at="2026-01-05T13:59:59Z", commit=commit())


def test_an_entry_is_exactly_one_of_a_commit_or_a_withdrawal() -> None:
    (first,) = build(STAMPS[0])
    with pytest.raises(LogError, match="exactly one"):
        next_entry(first, stamped_at=STAMPS[1])
    raw = dict(document([first])["entries"][0], kind="withdraw")
    with pytest.raises(LogError, match="exactly its own part"):
        parse_entry(raw)


# -- edited -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seq", "path", "value"),
    [
        (1, ("commit", "agent", "digest"), "sha256:" + "ee" * 32),
        (
            1,
            (
                "commit",
                "submitter",
            ),
            "eve",
        ),
        (2, ("commit", "benchmark", "hold_sessions"), 6),
        (2, ("commit", "model", "training_cutoff"), "2023-06-01"),
        (3, ("stamped_at",), "2026-01-06T09:00:01Z"),
        (4, ("withdraw", "reason"), "changed my mind"),
        (4, ("stamped_at",), "2026-01-08T10:00:00Z"),
    ],
)
def test_an_edited_entry_breaks_verification_naming_it(
    log: dict[str, Any], seq: int, path: tuple[str, ...], value: Any
) -> None:
    edited = copy.deepcopy(log)
    target = edited["entries"][seq - 1]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    message = refused(edited)
    # the entry after names the edited one's old digest; the last is held by the head
    assert f"entry {seq}" in message


def test_an_edit_the_forger_rechains_is_caught_by_a_kept_head(log: dict[str, Any]) -> None:
    kept = f"{log['head']['seq']}:{log['head']['digest']}"
    raw = copy.deepcopy(log["entries"])
    raw[0]["commit"]["agent"]["digest"] = "sha256:" + "ee" * 32
    forged = rechain(raw)
    verify_log(forged)  # consistent on its own: only a kept head tells
    assert "kept head 4:" in refused(forged, heads=(kept,))


def test_a_malformed_entry_is_named_by_its_place(log: dict[str, Any]) -> None:
    edited = copy.deepcopy(log)
    edited["entries"][1]["stamped_at"] = "2026-02-30T09:00:00Z"  # the pattern fits; no instant
    assert refused(edited).startswith("entry 2: ")
    edited["entries"][1]["stamped_at"] = "2026-01-06T09:00:00+00:00"
    assert refused(edited).startswith("entry 2: ")
    edited["entries"][1] = {**log["entries"][1], "extra": 1}
    assert refused(edited).startswith("entry 2: ")


def test_a_stamp_in_other_digits_is_refused(log: dict[str, Any]) -> None:
    edited = copy.deepcopy(log)
    edited["entries"][0]["stamped_at"] = "\u0662\u0660\u0662\u0666-01-05T14:00:00Z"
    assert refused(rechain(edited["entries"])).startswith("entry 1: ")


# -- removed, reordered, backdated ----------------------------------------------------------


@pytest.mark.parametrize("removed", [1, 2, 3])
def test_a_removed_entry_breaks_verification(log: dict[str, Any], removed: int) -> None:
    edited = copy.deepcopy(log)
    del edited["entries"][removed - 1]
    assert f"entry {removed}" in refused(edited)


def test_a_removed_last_entry_with_its_head_rewritten_is_caught_by_a_kept_head(
    log: dict[str, Any],
) -> None:
    kept = f"4:{log['head']['digest']}"
    entries = verify_log(log)[:-1]
    truncated = document(entries)
    verify_log(truncated)
    assert "kept head 4:" in refused(truncated, heads=(kept,))
    assert "no entry of the log has that digest" in refused(
        truncated, heads=(log["head"]["digest"],)
    )


def test_reordered_entries_break_verification(log: dict[str, Any]) -> None:
    edited = copy.deepcopy(log)
    edited["entries"][1], edited["entries"][2] = edited["entries"][2], edited["entries"][1]
    assert "entry 2: numbered 3" in refused(edited)
    # renumbered and re-linked: the withdrawal still names entry 2 by its old digest
    raw = copy.deepcopy(edited["entries"])
    raw[1]["seq"], raw[2]["seq"] = 2, 3
    assert "entry 4: withdraws entry 2 by digest" in refused(rechain(raw, as_forged=4))
    # and with that re-linked too (another agent withdrawn), a kept head still tells
    kept = f"2:{entry_digest(log['entries'][1])}"
    assert "kept head 2:" in refused(rechain(raw), heads=(kept,))


def test_a_backdated_stamp_breaks_verification(log: dict[str, Any]) -> None:
    raw = copy.deepcopy(log["entries"])
    raw[2]["stamped_at"] = "2026-01-05T13:00:00Z"  # before entry 2's
    message = refused(rechain(raw))
    assert message.startswith("entry 3: stamped 2026-01-05T13:00:00Z, before entry 2's")


def test_a_backdated_stamp_that_keeps_the_order_is_caught_by_a_kept_head(
    log: dict[str, Any],
) -> None:
    kept = f"3:{entry_digest(log['entries'][2])}"
    raw = copy.deepcopy(log["entries"])
    raw[2]["stamped_at"] = "2026-01-06T09:00:00Z"
    raw[1]["stamped_at"] = "2026-01-05T15:00:00Z"  # earlier, still after entry 1
    assert "kept head 3:" in refused(rechain(raw), heads=(kept,))


# -- forged withdrawals -----------------------------------------------------------------------


def _with_withdrawal(log: dict[str, Any], **changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(log["entries"])
    extra = copy.deepcopy(raw[-1])
    extra["seq"] = 5
    extra["stamped_at"] = "2026-01-08T10:00:00Z"
    extra["withdraw"].update(changes)
    return rechain([*raw, extra], as_forged=5)


def test_a_withdrawal_by_a_wrong_digest_is_refused(log: dict[str, Any]) -> None:
    forged = _with_withdrawal(log, withdraws=1, entry="sha256:" + "00" * 32)
    assert "entry 5: withdraws entry 1 by digest" in refused(forged)


def test_a_withdrawal_of_a_withdrawal_is_refused(log: dict[str, Any]) -> None:
    forged = _with_withdrawal(log, withdraws=4, entry=entry_digest(log["entries"][3]))
    assert refused(forged) == "entry 5: withdraws entry 4, not a commitment"


@pytest.mark.parametrize("target", [5, 6, 99])
def test_a_withdrawal_of_itself_or_a_later_entry_is_refused(
    log: dict[str, Any], target: int
) -> None:
    forged = _with_withdrawal(log, withdraws=target)
    assert refused(forged) == f"entry 5: withdraws entry {target}, not a commitment"


def test_a_double_withdrawal_is_refused(log: dict[str, Any]) -> None:
    forged = _with_withdrawal(log)  # entry 2 again, by its right digest
    assert refused(forged) == "entry 5: entry 2 was already withdrawn"


# -- the document and kept heads ----------------------------------------------------------


def test_a_document_whose_head_is_not_its_last_entry_is_refused(log: dict[str, Any]) -> None:
    edited = copy.deepcopy(log)
    edited["head"] = {"seq": 3, "digest": entry_digest(log["entries"][2])}
    assert refused(edited).startswith("entry 4: hashes to")
    for broken in ({"log": "other"}, {**log, "entries": {}}, {**log, "head": {"seq": 4}}, []):
        with pytest.raises(LogError):
            verify_log(broken)


@pytest.mark.parametrize(
    "kept", ["4", "x:sha256:" + "ab" * 32, "sha256:XYZ", "0:sha256:" + "ab" * 32]
)
def test_a_malformed_or_impossible_kept_head_is_refused(log: dict[str, Any], kept: str) -> None:
    assert refused(log, heads=(kept,)).startswith("kept head")


def test_a_kept_head_at_the_wrong_place_is_refused(log: dict[str, Any]) -> None:
    first = entry_digest(log["entries"][0])
    assert "no such entry at 2" in refused(log, heads=(f"2:{first}",))


# -- any single change is detected --------------------------------------------------------


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*path, i))]
    return [(path, value)]


_BASE = document(append_withdrawal(build(*STAMPS), 2, "2026-01-07T10:00:00Z"))
_LEAVES = [
    (n, path, value)
    for n, entry in enumerate(_BASE["entries"])
    for path, value in _leaves(entry)
    if value is not None
]


@settings(max_examples=300, deadline=None, database=None)
@given(
    which=st.integers(min_value=0, max_value=len(_LEAVES) - 1),
    position=st.integers(min_value=0),
    byte=st.integers(min_value=0, max_value=255),
)
def test_any_single_byte_change_to_any_field_is_detected(
    which: int, position: int, byte: int
) -> None:
    n, path, value = _LEAVES[which]
    text = str(value).encode()
    at = position % len(text)
    if text[at] == byte:
        byte = (byte + 1) % 256
    changed_bytes = text[:at] + bytes([byte]) + text[at + 1 :]
    changed: Any = changed_bytes.decode("utf-8", errors="surrogateescape")
    if isinstance(value, int):
        with contextlib.suppress(ValueError):  # a number made text: still a change
            changed = int(changed)
    edited = copy.deepcopy(_BASE)
    target = edited["entries"][n]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = changed
    with pytest.raises(LogError):
        verify_log(edited)


def test_the_stamped_clock_is_the_sites_in_utc() -> None:
    moment = datetime(2026, 3, 8, 7, 0, tzinfo=UTC)  # the day New York moves its clocks
    assert stamp(moment) == "2026-03-08T07:00:00Z"


def answers(point_set: str = "cohort-2027q1") -> Answers:
    return Answers(
        answer_set="sha256:" + "12" * 32, model="m-1", point_set=point_set,
        point_set_commitment="sha256:" + "34" * 32, question_digest="sha256:" + "56" * 32,
        reveal_on="2027-01-04", submitter="ada",
    )  # fmt: skip


def test_an_answers_entry_is_chained_like_any_other_and_cannot_be_withdrawn() -> None:
    first = build("2026-12-01T00:00:00Z")
    received = next_entry(first[-1], stamped_at="2026-12-02T00:00:00Z", answers=answers())
    entries = [*first, received]
    assert received.kind == "answers" and received.commit is None
    assert [e.seq for e in verify_log(document(entries))] == [1, 2]
    assert live_commitments(entries) == first  # an answers entry commits no agent
    # its part is closed and its own: an answers entry carrying a commit is refused
    body = document(entries)
    body["entries"][1]["commit"] = body["entries"][0]["commit"]
    with pytest.raises(LogError, match="carries exactly its own part"):
        verify_log(body)
    # one changed byte of the answers (a later, better answer set swapped in) breaks it
    body = document(entries)
    body["entries"][1]["answers"]["answer_set"] = "sha256:" + "13" * 32
    with pytest.raises(LogError, match="head"):
        verify_log(body)
    # a withdrawal names a commitment, never answers
    forged = next_entry(received, stamped_at="2026-12-03T00:00:00Z", withdraw=withdraw(received))
    with pytest.raises(LogError, match="not a commitment"):
        verify_log(document([*entries, forged]))
    with pytest.raises(LogError, match="exactly one of"):
        next_entry(received, stamped_at="2026-12-03T00:00:00Z", commit=commit(), answers=answers())
    with pytest.raises(LogError):
        parse_entry({**body["entries"][1], "answers": {**body["entries"][1]["answers"],
                                                       "reveal_on": "soon"}})  # fmt: skip
