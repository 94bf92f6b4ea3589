"""``pit-harness commitments``: the forward track's commitment log checked offline.

``verify`` walks the whole chain (every entry naming its predecessor's digest, stamps never
going backwards, every withdrawal naming an earlier commitment) and every head the reader
kept; ``head`` prints the log's head in the form a reader keeps it (``SEQ:sha256:...``),
to pass to a later ``verify --head``."""

from __future__ import annotations

import argparse

from harness.attest.heads import verify_head
from harness.attest.keys import stamp
from harness.attest.statement import StatementError
from harness.cli.certificate import read_document, read_keys
from harness.cli.common import UsageError, read_json_document
from harness.forward.log import Entry, LogError, entry_digest, head_of, parse_head, verify_log
from harness.outcomes import EXIT_MISMATCH, EXIT_OK


def _short(digest: str) -> str:
    return digest[:19]  # "sha256:" and 12 hex digits: enough to tell entries apart by eye


def entry_line(entry: Entry, withdrawn: set[int]) -> str:
    """One entry as ``verify`` lists it."""
    if entry.commit is not None:
        agent = entry.commit.agent
        what = f"{agent.name} {_short(agent.digest)}"
        status = "withdrawn" if entry.seq in withdrawn else "live"
    elif entry.withdraw is not None:
        what = f"withdraws entry {entry.withdraw.withdraws} {_short(entry.withdraw.entry)}"
        status = "-"
    elif entry.seal is not None:
        seal = entry.seal
        what = (
            f"seals live-shadow cohort {seal.point_set} ({seal.points} point(s), "
            f"as of {seal.first_as_of}, resolving by {seal.last_resolves_on})"
        )
        status = "-"
    else:
        assert entry.answers is not None
        answers = entry.answers
        what = (
            f"answers {_short(answers.answer_set)} to point set {answers.point_set} "
            f"(sealed until {answers.reveal_on})"
        )
        status = "-"
    return f"{entry.seq:>5}  {entry.kind:<8}  {entry.stamped_at}  {what}  {status}"


def _signed_heads(args: argparse.Namespace) -> list[str] | None:
    """The heads the site signed (``--signed-head``), each checked against ``--keys``,
    as kept heads; None (after saying why) if a signature does not hold."""
    files = getattr(args, "signed_head", None) or ()
    if not files:
        return []
    if not args.keys:
        raise UsageError("--signed-head needs --keys (the site's published keys)")
    keys = read_keys(args.keys)
    kept = []
    for path in files:
        try:
            head = verify_head(read_document(path, "--signed-head"), keys)
        except StatementError as exc:
            print(f"signed head BROKEN  {path}: {exc}")
            return None
        print(f"signed head ok  {head.kept()}  signed {stamp(head.signed_at)}")
        kept.append(head.kept())
    return kept


def _verified(args: argparse.Namespace) -> list[Entry] | None:
    for kept in getattr(args, "head", None) or ():
        try:  # a mistyped head is the reader's slip (exit 2), not a broken log
            parse_head(kept)
        except LogError as exc:
            raise UsageError(f"--head: {exc}") from None
    signed = _signed_heads(args)
    if signed is None:
        return None
    args.head = [*(getattr(args, "head", None) or ()), *signed]
    try:
        return verify_log(read_json_document(args.log), heads=args.head)
    except LogError as exc:
        print(f"chain BROKEN  {exc}")
        return None


def cmd_commitments_verify(args: argparse.Namespace) -> int:
    entries = _verified(args)
    if entries is None:
        return EXIT_MISMATCH
    withdrawn = {e.withdraw.withdraws for e in entries if e.withdraw is not None}
    for entry in entries:
        print(entry_line(entry, withdrawn))
    head = head_of(entries)
    kept = f"  ({len(args.head)} kept head(s) still in it)" if args.head else ""
    print(f"chain ok  head {head.seq} {head.digest or '(empty log)'}{kept}")
    return EXIT_OK


def cmd_commitments_head(args: argparse.Namespace) -> int:
    entries = _verified(args)
    if entries is None:
        return EXIT_MISMATCH
    if not entries:
        print("0  (the empty log has no head to keep)")
        return EXIT_OK
    print(f"{entries[-1].seq}:{entry_digest(entries[-1])}")
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``commitments verify`` and ``commitments head``."""
    group = sub.add_parser(
        "commitments", help="the forward track's public commitment log, checked offline"
    )
    groupsub = group.add_subparsers(dest="commitments_command", required=True)
    ver = groupsub.add_parser(
        "verify",
        help="check a commitment log's hash chain, stamps and withdrawals, and that every "
        "--head kept earlier is still in it; list its entries; exit 1 if it does not hold, "
        "2 if the file cannot be read",
    )
    ver.add_argument("log", metavar="LOG.json", help="the log document the site publishes")
    ver.add_argument(
        "--head",
        action="append",
        metavar="SEQ:DIGEST",
        help="a head kept earlier (SEQ:sha256:... or a bare sha256:...), which the log must "
        "still hold unchanged; repeatable",
    )
    ver.add_argument(
        "--signed-head",
        action="append",
        metavar="HEAD.json",
        help="a head the site signed (/forward/log/head.signed.json, kept earlier): its "
        "signature checked against --keys, then held like --head; repeatable",
    )
    ver.add_argument("--keys", help="the site's published keys (/.well-known/pitweb-keys.json)")
    ver.set_defaults(func=cmd_commitments_verify)
    head = groupsub.add_parser(
        "head",
        help="print a verified log's head as SEQ:sha256:..., the form to keep and pass to a "
        "later verify --head",
    )
    head.add_argument("log", metavar="LOG.json", help="the log document the site publishes")
    head.set_defaults(func=cmd_commitments_head)
