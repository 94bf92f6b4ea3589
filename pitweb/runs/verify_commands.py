"""The run page's "verify it yourself" commands: download the receipt, the trajectory,
the release's archive and its reference prices from this site into an empty folder,
check the downloads' sha256, unpack, and run ``pit-harness verify`` (and ``rescore``,
which reproduces the platform figures) offline. Every word is quoted for a POSIX shell,
so the commands work as written. After them, in the same folder, the run's reasoning
audit is made again (``audit_commands``) and checked against the digest the page shows."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from django.urls import reverse

from pitweb.releases import archive
from pitweb.releases.models import ReferencePrices
from pitweb.releases.selectors import files_held
from pitweb.runs.models import Run

RECEIPT, TRAJECTORY, ARCHIVE = "receipt.json", "trajectory.jsonl", "release.tar"
LOG = "commitments-log.json"
AUDIT = "reasoning-audit.json"


@dataclass
class VerifyCommands:
    lines: list[str] = field(default_factory=list)
    # what the commands cannot do from this site alone, in words (empty: nothing)
    caveats: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _q(word: str) -> str:
    return shlex.quote(word)


def _sha_check(sha256: str, name: str) -> str:
    return f"echo {_q(sha256.removeprefix('sha256:') + '  ' + name)} | sha256sum -c -"


def run_prices(run: Run) -> ReferencePrices | None:
    """The reference prices the run's platform figures are priced with (its release's
    newest version while it has none yet)."""
    if run.platform is not None:
        return run.platform.prices
    if run.release is None:
        return None
    return run.release.reference_prices.order_by("-version").first()


def stated_prices_sha(run: Run) -> str | None:
    """The sha256 of the price file the receipt binds (None: the run was not priced)."""
    prices = run.receipt.protocol.p4.prices
    return getattr(prices, "file_sha256", None) or None


def _bundle_word(run: Run) -> str | None:
    """The release folder the verify commands unpack (None: this site does not hold it)."""
    release = run.release
    if release is None or not files_held(release) or not release.archive_sha256:
        return None
    return archive.folder_name(release)


def audit_commands(run: Run, digest: str) -> VerifyCommands:
    """In the folder the verify commands made: the run's reasoning audit re-derived
    offline from the receipt, the trajectory and the release, and its file checked
    against ``digest`` (the digest is the sha256 of the file the command writes)."""
    folder = _bundle_word(run)
    out = VerifyCommands()
    if folder is None:
        name = run.release.name if run.release else run.release_digest
        folder = _q(f"<your copy of {name}>")
        out.caveats.append("this site does not hold the run's release: use your own copy of it")
    out.lines.append(
        f"pit-harness audit-reasoning --receipt {RECEIPT} --trajectory {TRAJECTORY} "
        f"--bundle {folder} --out {AUDIT}"
    )
    out.lines.append(_sha_check(digest, AUDIT))
    return out


def verify_commands(run: Run, *, site: str) -> VerifyCommands:
    """The commands for ``run``, with every URL absolute on ``site`` (scheme and host,
    from the request)."""
    out = VerifyCommands(["mkdir verify-run && cd verify-run"])
    if run.visibility != "public" or run.hidden or run.withdrawn_at is not None:
        out.caveats.append(
            "this run is not public, so its receipt and trajectory download only for who "
            "may see it: download them with the links below while signed in"
        )
    sha = run.body_sha256.removeprefix("sha256:")
    for what, name in (("receipt", RECEIPT), ("trajectory", TRAJECTORY)):
        url = site + reverse("run-download", args=[sha, what]) + f"?submission={run.pk}"
        out.lines.append(f"curl -fLo {name} {_q(url)}")
    release = run.release
    if release is None or not files_held(release) or not release.archive_sha256:
        out.lines.append(
            f"pit-harness verify {RECEIPT} --trajectory {TRAJECTORY} --bundle "
            f"{_q('<your copy of ' + (run.release.name if run.release else run.release_digest) + '>')}"
        )
        out.caveats.append("this site does not hold the run's release: use your own copy of it")
        return out
    prices = run_prices(run)
    priced_with_reference = prices is not None and stated_prices_sha(run) == prices.file_sha256
    csv = f"reference-prices-v{prices.version}.csv" if prices is not None else ""
    url = site + reverse("release-archive", args=[release.digest_hex])
    out.lines.append(f"curl -fLo {ARCHIVE} {_q(url)}")
    out.lines.append(_sha_check(release.archive_sha256, ARCHIVE))
    if prices is not None:
        url = site + reverse("reference-prices-csv", args=[release.digest_hex, prices.version])
        out.lines.append(f"curl -fLo {csv} {_q(url)}")
        out.lines.append(_sha_check(prices.file_sha256, csv))
    folder = archive.folder_name(release)
    out.lines.append(f"tar -xf {ARCHIVE}")
    verify = f"pit-harness verify {RECEIPT} --trajectory {TRAJECTORY} --bundle {folder}"
    if run.body.get("config", {}).get("forward") is not None:
        # a forward binding is looked up in the commitment log (append-only: a later copy
        # still holds the entry and the head the run names)
        out.lines.append(f"curl -fLo {LOG} {_q(site + reverse('forward-log'))}")
        verify += f" --log {LOG}"
    out.lines.append(verify + (f" --prices {csv}" if priced_with_reference else ""))
    if stated_prices_sha(run) and not priced_with_reference:
        out.caveats.append(
            "the run was priced with the submitter's own price file, which this site does "
            "not publish: verify re-derives every hash and trade and skips the returns it "
            "alone prices"
        )
    if prices is not None:
        out.lines.append(
            f"pit-harness rescore {RECEIPT} --trajectory {TRAJECTORY} --bundle {folder} "
            f"--prices {csv} --source {_q(prices.source)} --pulled-at {_q(prices.pulled_at)}"
        )
    else:
        out.caveats.append(
            "the release has no reference prices yet, so there are no platform figures to reproduce"
        )
    return out
