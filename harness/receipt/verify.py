"""Offline verification: recompute every hash a receipt binds, against files the
reader holds. Needs no network and no trust in whoever produced the receipt."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import canonical
from harness.forward.check import ForwardStatus, forward_status
from harness.forward.log import Entry
from harness.receipt.binding import bound_prices, config_binding, stated_prices
from harness.receipt.build import ReceiptError, read_receipt, receipt_text
from harness.receipt.model import BodyError, ReceiptBody, body_from_dict
from harness.release.bundle import Bundle
from harness.release.store import ReleaseError
from harness.rundata.trajectory import file_sha256, first_event


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    body: dict[str, Any] = field(default_factory=dict)
    # a run bound to a commitment, once its hashes hold against the trajectory and the
    # release: whether it is what the binding says. Kept apart from ``failures``: a run
    # that is not forward may still be a sound run.
    forward: ForwardStatus | None = None

    @property
    def ok(self) -> bool:
        return not self.failures

    def check(self, ok: bool, label: str, good: str, bad: str) -> None:
        if ok:
            self.lines.append(f"{label} ok  {good}")
        else:
            self.lines.append(f"{label} MISMATCH  {bad}")
            self.failures.append(bad)


def check_receipt(path: str | os.PathLike[str]) -> tuple[Report, dict[str, Any]]:
    report = Report()
    name = Path(path).name
    data, text = read_receipt(path)
    body = data["body"]
    try:
        recomputed = canonical.digest(body)
    except canonical.CanonicalError as exc:
        raise ReceiptError(f"{name}: body has no canonical form ({exc})") from None
    claimed = data["body_sha256"]
    try:
        layout_ok = isinstance(data["emitted_at"], str) and text == receipt_text(
            body, data["emitted_at"]
        )
    except canonical.CanonicalError:
        layout_ok = False
    if recomputed != claimed:
        report.check(
            False,
            "body_sha256",
            "",
            f"{name}: body hashes to {recomputed}, the receipt says {claimed}",
        )
    elif not layout_ok:
        report.check(
            False,
            "body_sha256",
            "",
            f"{name}: bytes differ from the canonical receipt layout (file altered)",
        )
    else:
        report.check(True, "body_sha256", claimed, "")
        bound = (body.get("binding") or {}).get("config_sha256")
        if config_binding(body):  # the config a reader sees must be the one that is bound
            report.lines[-1] = (
                f"body_sha256 MISMATCH  {name}: its config does not hash to config_sha256 {bound}"
            )
            report.failures.append(report.lines[-1])
        else:
            disagreement = prices_disagreement(body)
            if disagreement:
                report.lines[-1] = f"body_sha256 MISMATCH  {name}: {disagreement}"
                report.failures.append(report.lines[-1])
    report.body = body
    return report, body


def sound_body(path: str | os.PathLike[str]) -> ReceiptBody:
    """The typed body of a receipt file whose hashes hold (``check_receipt``'s checks: its
    body_sha256, its layout, its bound config and prices); ReceiptError naming the first
    that does not, or the field a body the harness could not have written gets wrong."""
    report, body = check_receipt(path)
    if not report.ok:
        raise ReceiptError(report.failures[0])
    try:
        return body_from_dict(body)
    except BodyError as exc:
        raise ReceiptError(f"{Path(path).name}: {exc}") from None


def prices_disagreement(body: dict[str, Any]) -> str | None:
    """Where the prices bound in the config and the P4 statement differ, if they do: a
    run has one price file, and both say which."""
    bound, stated = bound_prices(body), stated_prices(body)
    if bound is None and stated is None:
        return None
    if not isinstance(bound, dict) or not isinstance(stated, dict):
        return (
            f"config.prices is {'set' if bound else 'null'} but P4 states "
            f"{'prices' if stated else 'none'}"
        )
    differ = [
        k for k in ("file", "file_sha256", "source", "pulled_at") if bound.get(k) != stated.get(k)
    ]
    if differ:
        return "config.prices and P4 disagree on " + ", ".join(differ)
    return None


def verify(
    receipt: str | os.PathLike[str],
    *,
    trajectory: str | os.PathLike[str] | None,
    bundle: str | os.PathLike[str] | None,
    log: Sequence[Entry] | None = None,
) -> Report:
    """``log``: the commitment log's verified entries, against which a forward binding is
    looked up (without it a bound run is at best ``unresolved``)."""
    report, body = check_receipt(receipt)
    report.lines.append(
        f"run_valid {body.get('valid')}  protocol_complete {body.get('protocol_complete')}"
    )
    binding = body.get("binding") or {}
    if trajectory is None:
        report.lines.append("trajectory SKIPPED  (not given: pass --trajectory to check it)")
    else:
        name = Path(trajectory).name
        want = binding.get("trajectory_sha256")
        try:
            got = file_sha256(trajectory)
        except FileNotFoundError:
            got = None
        if got is None:
            report.check(False, "trajectory", "", f"{name}: no such file")
        elif got != want:
            report.check(
                False, "trajectory", "", f"{name}: hashes to {got}, the receipt binds {want}"
            )
        else:
            try:
                started: Any = first_event(trajectory).get("config")
            except ValueError:
                started = None
            problems = [p for c, p in config_binding(body, started) if c == "config_sha256"]
            if problems:
                report.check(False, "trajectory", "", f"{name}: {problems[0]}")
            else:
                report.check(True, "trajectory", got, "")
    if bundle is None:
        report.lines.append("bundle content_digest SKIPPED  (not given: pass --bundle to check it)")
    else:
        want = binding.get("bundle_content_digest")
        try:
            loaded = Bundle.load(bundle)
            problems = loaded.check()
            digest = loaded.content_digest
        except ReleaseError as exc:
            problems, digest = [str(exc)], None
        if problems:
            report.check(False, "bundle content_digest", "", "; ".join(problems))
        elif digest != want:
            report.check(
                False,
                "bundle content_digest",
                "",
                f"{Path(bundle).name}: content_digest {digest}, the receipt binds {want} (another release)",
            )
        else:
            report.check(True, "bundle content_digest", str(digest), "")
    if report.ok and trajectory is not None and bundle is not None:
        report.forward = _forward(body, bundle, trajectory, log)
    return report


def _forward(
    body: dict[str, Any],
    bundle: str | os.PathLike[str],
    trajectory: str | os.PathLike[str],
    log: Sequence[Entry] | None,
) -> ForwardStatus | None:
    """A bound run's forward verdict (None: not bound), once its hashes hold."""
    try:
        status = forward_status(body, bundle, trajectory, log)
    except (ReleaseError, ValueError, KeyError, TypeError) as exc:
        # hashes that hold over a body the harness did not write: the claim fails
        status = ForwardStatus(status="not_forward", problems=[f"not_a_binding: {exc}"])
    return None if status.status == "not_bound" else status
