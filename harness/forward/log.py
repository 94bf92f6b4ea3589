"""The commitment log: public, append-only, each entry naming the digest of the one before.

An entry is canonical JSON (``harness.canonical``); its digest is the sha256 of those bytes,
every field included. Entry 1 names no previous entry (``prev`` is null); entry n names
entry n-1's digest, so an entry edited, removed, reordered or backdated breaks every digest
after it. The log's **head** is its last entry's sequence number and digest: a reader who
kept a head can later check that the log they are shown still holds that entry, unchanged
(:func:`verify_log` with ``heads``), which is how removal is caught.

Four kinds of entry::

    commit    an agent package (its content digest), the benchmark it enters and, for a
              model agent, its declared model and training cutoff
    withdraw  a commitment withdrawn (by its sequence number and digest), with a reason;
              the commitment stays in the log
    answers   an answer set received for a sealed point set before its reveal: the answer
              set's digest, the set's name, its sealed commitment and Questions' digest,
              and the reveal date; stamped before the labels were public, which is what
              makes its judgment a formal result
    seal      a live-shadow cohort sealed: its public plan's commitment (each point's
              Question hash, as-of and resolution dates and rule), before any as-of date

``stamped_at`` is the site's own time (UTC, whole seconds, ``Z``), never the submitter's,
and never goes backwards along the chain. The log is a JSON document::

    {"log": "pitweb-commitments/1", "entries": [...], "head": {"seq": n, "digest": ...}}

What the log does not prove: that the site's clock was right when it stamped an entry.
A reader who wants that keeps heads as they are published (every page that cites the log
and every snapshot carries one) and checks them against later copies; an entry cannot be
inserted behind a head someone holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from harness import canonical

FORMAT = "pitweb-commitments/1"

Sha256 = Annotated[str, Meta(pattern="^sha256:[0-9a-f]{64}$")]
# ASCII digits only: ``\d`` also matches other scripts' digits, which would order stamps
# by code point rather than by time
Stamp = Annotated[str, Meta(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")]
Text = Annotated[str, Meta(max_length=500)]
Day = Annotated[str, Meta(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


class Closed(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A part of an entry: closed (an unknown field is refused) and immutable."""


class CommittedAgent(Closed, frozen=True, forbid_unknown_fields=True):
    name: Annotated[str, Meta(min_length=1, max_length=100)]
    # the package's content digest (``External.digest``): what a forward run's agent must be
    digest: Sha256
    transport: Literal["stdio"]  # an HTTP endpoint cannot be committed
    dialect: Annotated[str, Meta(max_length=32)]
    label: Annotated[str, Meta(max_length=200)]


class CommittedBenchmark(Closed, frozen=True, forbid_unknown_fields=True):
    # the release line it enters, by name, and the version current when it committed
    release: Annotated[str, Meta(min_length=1, max_length=200)]
    release_digest: Sha256
    forms: tuple[Annotated[str, Meta(min_length=1, max_length=32)], ...]
    hold_sessions: Annotated[int, Meta(ge=1, le=250)]
    clocks: tuple[str, ...]
    arms: tuple[str, ...]


class DeclaredModel(Closed, frozen=True, forbid_unknown_fields=True):
    # empty strings: not a model agent, or not declared (a gap, never a guess)
    model_version: Text = ""
    training_cutoff: Annotated[str, Meta(max_length=10)] = ""


class Commit(Closed, frozen=True, forbid_unknown_fields=True):
    agent: CommittedAgent
    benchmark: CommittedBenchmark
    model: DeclaredModel
    submitter: Annotated[str, Meta(min_length=1, max_length=150)]


class Withdraw(Closed, frozen=True, forbid_unknown_fields=True):
    withdraws: Annotated[int, Meta(ge=1)]  # the commit entry's sequence number
    entry: Sha256  # and its digest
    reason: Text
    submitter: Annotated[str, Meta(min_length=1, max_length=150)]


class Answers(Closed, frozen=True, forbid_unknown_fields=True):
    # the answer set (canonical digest of the ``pit_answer_set`` body) and what it answers
    answer_set: Sha256
    model: Text
    point_set: Annotated[str, Meta(min_length=1, max_length=100)]
    # the sealed set's salted commitment to its hidden sections (a live-shadow cohort's: its
    # plan's), and its Questions' digest: the answers were made against these
    point_set_commitment: Sha256
    question_digest: Sha256
    # the set's reveal date (a live-shadow cohort's: its last resolution date)
    reveal_on: Day
    submitter: Annotated[str, Meta(min_length=1, max_length=150)]


class Seal(Closed, frozen=True, forbid_unknown_fields=True):
    # a live-shadow cohort (``harness.points.live``): its plan's commitment and Questions
    point_set: Annotated[str, Meta(min_length=1, max_length=100)]
    plan: Sha256
    question_digest: Sha256
    points: Annotated[int, Meta(ge=1)]
    first_as_of: Day
    last_resolves_on: Day
    submitter: Annotated[str, Meta(min_length=1, max_length=150)]


class Entry(Closed, frozen=True, forbid_unknown_fields=True):
    log: Literal["pitweb-commitments/1"]
    seq: Annotated[int, Meta(ge=1)]
    prev: Sha256 | None
    kind: Literal["commit", "withdraw", "answers", "seal"]
    stamped_at: Stamp
    commit: Commit | None = None
    withdraw: Withdraw | None = None
    answers: Answers | None = None
    seal: Seal | None = None


class Head(Closed, frozen=True, forbid_unknown_fields=True):
    seq: Annotated[int, Meta(ge=0)]
    digest: Sha256 | None  # None: the empty log


class LogError(ValueError):
    """A log, an entry or a head that does not hold, with the entry at fault."""


def plain(entry: Entry) -> dict[str, Any]:
    """An entry as the plain dict its digest is taken over (absent parts left out)."""
    body: dict[str, Any] = msgspec.to_builtins(entry)
    return {k: v for k, v in body.items() if v is not None or k == "prev"}


def entry_digest(entry: Entry | dict[str, Any]) -> str:
    """sha256 over the entry's canonical JSON: every field, the previous digest included."""
    try:
        return canonical.digest(plain(entry) if isinstance(entry, Entry) else entry)
    except (canonical.CanonicalError, UnicodeEncodeError) as exc:
        # JSON's \ud800 escapes decode to text no UTF-8 byte string holds
        raise LogError(f"entry has no canonical form ({exc})") from None


def parse_entry(value: Any) -> Entry:
    """A plain entry as its type, or :class:`LogError` naming what is wrong with it."""
    try:
        entry = msgspec.convert(value, Entry)
    except msgspec.ValidationError as exc:
        raise LogError(f"not a {FORMAT} entry: {exc}") from None
    except UnicodeEncodeError:  # a lone surrogate (JSON's \ud800): no text holds it
        raise LogError(f"not a {FORMAT} entry: text that is not Unicode") from None
    parts = {
        "commit": entry.commit,
        "withdraw": entry.withdraw,
        "answers": entry.answers,
        "seal": entry.seal,
    }
    if any((kind == entry.kind) != (part is not None) for kind, part in parts.items()):
        raise LogError(f"entry {entry.seq}: a {entry.kind} entry carries exactly its own part")
    stamped_instant(entry.stamped_at)  # the pattern admits 2026-02-30; a stamp is an instant
    entry_digest(entry)  # and every entry has a digest
    return entry


def stamp(moment: datetime) -> str:
    """The site's time as an entry states it: UTC, whole seconds, ``Z``."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise LogError("a stamp needs an aware time (a naive one names no instant)")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")


def stamped_instant(value: str) -> datetime:
    """An entry's ``stamped_at`` as an aware UTC datetime."""
    if not _STAMP.fullmatch(value):
        raise LogError(f"stamped_at {value!r}: not YYYY-MM-DDTHH:MM:SSZ")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise LogError(f"stamped_at {value!r}: no such instant") from None


def next_entry(
    previous: Entry | None,
    *,
    stamped_at: str,
    commit: Commit | None = None,
    withdraw: Withdraw | None = None,
    answers: Answers | None = None,
    seal: Seal | None = None,
) -> Entry:
    """The entry that follows ``previous`` (None: the first entry of a log)."""
    given = {"commit": commit, "withdraw": withdraw, "answers": answers, "seal": seal}
    kinds = [kind for kind, part in given.items() if part is not None]
    if len(kinds) != 1:
        raise LogError("an entry is exactly one of a commit, a withdrawal, answers or a seal")
    if previous is not None and stamped_at < previous.stamped_at:
        raise LogError(
            f"stamped_at {stamped_at} is before entry {previous.seq}'s {previous.stamped_at}: "
            "the log's clock never goes backwards"
        )
    return parse_entry(
        {
            "log": FORMAT,
            "seq": 1 if previous is None else previous.seq + 1,
            "prev": None if previous is None else entry_digest(previous),
            "kind": kinds[0],
            "stamped_at": stamped_at,
            **{
                kind: None if part is None else msgspec.to_builtins(part)
                for kind, part in given.items()
            },
        }
    )


def head_of(entries: Sequence[Entry]) -> Head:
    if not entries:
        return Head(seq=0, digest=None)
    return Head(seq=entries[-1].seq, digest=entry_digest(entries[-1]))


def document(entries: Sequence[Entry]) -> dict[str, Any]:
    """The log as the JSON document the site publishes and ``commitments verify`` reads."""
    return {
        "log": FORMAT,
        "entries": [plain(e) for e in entries],
        "head": msgspec.to_builtins(head_of(entries)),
    }


def verify_chain(raw_entries: Iterable[Any]) -> list[Entry]:
    """Every entry well formed, numbered from 1 without a gap, naming its predecessor's
    digest, stamped no earlier than it, and every withdrawal naming an earlier commitment
    (by number and digest) not withdrawn before. Returns the entries; raises
    :class:`LogError` at the first one that does not hold."""
    entries: list[Entry] = []
    digests: list[str] = []
    withdrawn: set[int] = set()
    for position, raw in enumerate(raw_entries, start=1):
        try:
            entry = parse_entry(raw)
        except LogError as exc:  # named by its place: its own seq may be what was edited
            raise LogError(f"entry {position}: {exc}") from None
        if entry.seq != position:
            raise LogError(f"entry {position}: numbered {entry.seq} (an entry missing or moved)")
        expected_prev = digests[-1] if digests else None
        if entry.prev != expected_prev:
            raise LogError(
                f"entry {entry.seq}: names previous digest {entry.prev}, entry "
                f"{entry.seq - 1} hashes to {expected_prev} (an entry was edited or removed)"
                if expected_prev
                else f"entry 1: names a previous entry {entry.prev}, the first entry names none"
            )
        if entries and entry.stamped_at < entries[-1].stamped_at:
            raise LogError(
                f"entry {entry.seq}: stamped {entry.stamped_at}, before entry "
                f"{entries[-1].seq}'s {entries[-1].stamped_at} (backdated)"
            )
        if entry.withdraw is not None:
            target = entry.withdraw.withdraws
            if not 1 <= target < entry.seq or entries[target - 1].kind != "commit":
                raise LogError(f"entry {entry.seq}: withdraws entry {target}, not a commitment")
            if digests[target - 1] != entry.withdraw.entry:
                raise LogError(
                    f"entry {entry.seq}: withdraws entry {target} by digest "
                    f"{entry.withdraw.entry}, which is not that entry's"
                )
            if target in withdrawn:
                raise LogError(f"entry {entry.seq}: entry {target} was already withdrawn")
            withdrawn.add(target)
        entries.append(entry)
        digests.append(entry_digest(entry))
    return entries


def verify_log(log: Any, *, heads: Iterable[str] = ()) -> list[Entry]:
    """A published log document: its chain (:func:`verify_chain`), its stated head, and
    every head a reader kept (``seq:sha256:...`` or a bare digest) still in it."""
    if not isinstance(log, dict) or log.get("log") != FORMAT:
        raise LogError(f"not a {FORMAT} document")
    raw = log.get("entries")
    if not isinstance(raw, list):
        raise LogError("the document has no list of entries")
    entries = verify_chain(raw)
    try:
        stated = msgspec.convert(log.get("head"), Head)
    except (msgspec.ValidationError, UnicodeEncodeError) as exc:
        raise LogError(f"head: {exc}") from None
    last = head_of(entries)
    if stated != last:
        # the last entry names no successor: only the head (or a kept one) holds it
        raise LogError(
            f"entry {last.seq}: hashes to {last.digest}, the document's head says entry "
            f"{stated.seq} {stated.digest} (the last entry or the head was edited)"
        )
    digests = [entry_digest(e) for e in entries]
    for kept in heads:
        seq, digest = parse_head(kept)
        if seq is not None:
            if not 1 <= seq <= len(digests) or digests[seq - 1] != digest:
                raise LogError(
                    f"kept head {kept}: the log has no such entry at {seq} (an entry at or "
                    "before it was edited or removed)"
                )
        elif digest not in digests:
            raise LogError(f"kept head {kept}: no entry of the log has that digest")
    return entries


_HEAD = re.compile(r"(?:([0-9]+):)?(sha256:[0-9a-f]{64})")


def parse_head(text: str) -> tuple[int | None, str]:
    """A kept head as a reader writes it: ``seq:sha256:...`` or a bare ``sha256:...``."""
    match = _HEAD.fullmatch(text.strip())
    if match is None:
        raise LogError(f"kept head {text!r}: not SEQ:sha256:<64 hex> or sha256:<64 hex>")
    return (int(match[1]) if match[1] is not None else None), match[2]


def live_commitments(entries: Sequence[Entry]) -> list[Entry]:
    """The commit entries not withdrawn later in the log."""
    withdrawn = {e.withdraw.withdraws for e in entries if e.withdraw is not None}
    return [e for e in entries if e.kind == "commit" and e.seq not in withdrawn]
