"""``pit-harness certificate verify``: a run's certificate checked offline against the
site's published keys, a receipt and the site's signed revocation list."""

from __future__ import annotations

import argparse
from typing import Any

from harness import canonical
from harness.attest.certificate import verify_certificate
from harness.attest.keys import KeySetError, PublishedKey, read_keyset
from harness.cli.common import UsageError
from harness.outcomes import EXIT_MISMATCH, EXIT_OK, EXIT_UNCHECKED
from harness.points.jsonfile import JsonFileError, read_json


def read_document(path: str, what: str) -> Any:
    """A JSON file a reader holds; a usage error (exit 2) when it cannot be read."""
    try:
        return read_json(path)
    except FileNotFoundError:
        raise UsageError(f"{what} {path}: no such file") from None
    except (OSError, JsonFileError) as exc:
        raise UsageError(f"{what} {path}: {exc}") from None


def read_keys(path: str) -> dict[str, PublishedKey]:
    try:
        return read_keyset(read_document(path, "--keys"))
    except KeySetError as exc:
        raise UsageError(f"--keys {path}: {exc}") from None


def cmd_certificate_verify(args: argparse.Namespace) -> int:
    keys = read_keys(args.keys)
    receipt = read_document(args.receipt, "--receipt") if args.receipt else None
    if receipt is not None and not isinstance(receipt, dict):
        raise UsageError(f"--receipt {args.receipt}: not a receipt")
    revocations = read_document(args.revocations, "--revocations") if args.revocations else None
    check = verify_certificate(
        read_document(args.certificate, "certificate"),
        keys,
        receipt=receipt,
        revocations=revocations,
    )
    if args.json:
        print(canonical.dumps(check.to_json()))
    else:
        for line in check.lines:
            print(line)
        predicate = check.predicate
        if check.ok and predicate:
            print(summary(predicate))
    if not check.ok:
        if not args.json:
            print(f"certificate INVALID  ({', '.join(check.failed)})")
        return EXIT_MISMATCH
    if not check.revocation_checked:
        if not args.json:
            print("certificate ok, revocation not checked")
        return EXIT_UNCHECKED
    if not args.json:
        print("certificate ok")
    return EXIT_OK


def summary(predicate: dict[str, Any]) -> str:
    """What the site certified, in one line."""
    run = predicate.get("run") or {}
    verification = predicate.get("verification") or {}
    mask = predicate.get("mask") or {}
    forward = predicate.get("forward") or {}
    return (
        f"says: run {run.get('run_id')} {verification.get('level')}, mask "
        f"{mask.get('verdict')}, forward {forward.get('status')}, release "
        f"{(predicate.get('release') or {}).get('content_digest')}"
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``certificate verify``."""
    group = sub.add_parser("certificate", help="a run's certificate signed by the site")
    groupsub = group.add_subparsers(dest="certificate_command", required=True)
    ver = groupsub.add_parser(
        "verify",
        help="check a certificate offline: its Ed25519 signature against the site's "
        "published keys and their dates, its subjects against a receipt, and the signed "
        "revocation list; exit 0 if it holds and is not revoked, 1 if it does not hold or "
        f"is revoked, {EXIT_UNCHECKED} if it holds but revocation was not checked (no "
        "--revocations), 2 if a file cannot be read",
    )
    ver.add_argument("certificate", metavar="CERT", help="the certificate (a DSSE envelope)")
    ver.add_argument(
        "--keys", required=True, help="the site's published keys (/.well-known/pitweb-keys.json)"
    )
    ver.add_argument("--receipt", help="the run's receipt: its body must be the subject")
    ver.add_argument(
        "--revocations",
        help="the site's signed revocation list (/.well-known/pitweb-revocations.json)",
    )
    ver.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ver.set_defaults(func=cmd_certificate_verify)
