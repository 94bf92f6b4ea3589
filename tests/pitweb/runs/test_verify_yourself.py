"""The run page's "verify it yourself" block, run as written: its commands download the
receipt, the trajectory, the release's archive and its reference prices from the live
site into an empty folder and check their sha256; then, with no network at all, unpack
the release and run ``pit-harness verify`` (and ``rescore``) on the downloads. A tampered
download fails. The reasoning audit's commands, run after them, make the audit's file
again and check it against the digest the page shows. The run's certificate, fetched into
the same folder, checks offline too, and fails once the site revokes it."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest
from django.contrib.auth.models import User

from pitweb.runs.models import Run
from pitweb.runs.services import run_set_hidden
from tests.pitweb.conftest import Artifacts, make_run, submit_run

pytestmark = pytest.mark.django_db(transaction=True)

OFFLINE_FROM = ("tar ", "pit-harness ")  # the lines that need nothing but the downloads


@cache
def no_network_prefix() -> list[str]:
    """Run a command in a network namespace of its own (no interface but a down loopback)
    where the system allows it; CI must."""
    try:
        ok = subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0
    except FileNotFoundError:
        ok = False
    if not ok and os.environ.get("CI") == "true":
        pytest.fail("CI must run the offline verification without a network (unshare -rn)")
    return ["unshare", "-rn"] if ok else []


@dataclass
class Block:
    online: list[str]
    offline: list[str]
    folder: str


def block_of(run: Run, live_server: Any) -> Block:
    """The commands the run page shows, split where the network is no longer needed."""
    sha = run.body_sha256.removeprefix("sha256:")
    with urlopen(f"{live_server.url}/runs/{sha}/?submission={run.pk}", timeout=60) as page:
        text = page.read().decode()
    found = re.search(r'<pre id="verify-commands"[^>]*>(.*?)</pre>', text, re.S)
    assert found is not None
    lines = html.unescape(found[1]).splitlines()
    cut = next(i for i, line in enumerate(lines) if line.startswith(OFFLINE_FROM))
    folder = re.fullmatch(r"mkdir (\S+) && cd \1", lines[0])
    assert folder is not None, lines[0]
    return Block(lines[:cut], lines[cut:], folder[1])


def shell(
    lines: list[str], cwd: Path, *, offline: bool, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(cwd),
        "LANG": "C.UTF-8",
        **(env or {}),
    }
    command = [*(no_network_prefix() if offline else []), "bash", "-e", "-c", "\n".join(lines)]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture()
def reference_priced(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, reference_file: Path
) -> Artifacts:
    """A run priced with the very file the release's reference prices are."""
    return make_run(site_release, tmp_path_factory.mktemp("reference-priced"), reference_file)


def proven(user: User, artifacts: Artifacts) -> Run:
    run: Run = submit_run(user, artifacts)
    assert run.status == "verified" and run.platform is not None
    assert run.platform.state == "scored"
    return run


def downloaded(run: Run, live_server: Any, tmp_path: Path) -> tuple[Block, Path]:
    block = block_of(run, live_server)
    work = tmp_path / "empty"
    work.mkdir()
    fetched = shell(block.online, work, offline=False)
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    assert fetched.stdout.count(": OK") == 2  # the archive and the price file, checked
    return block, work / block.folder


Downloaded = tuple[Run, Block, Path]


@pytest.fixture()
def reference_download(
    live_server: Any,
    priced_release: Any,
    submitter: User,
    reference_priced: Artifacts,
    tmp_path: Path,
) -> Downloaded:
    """A run priced with the reference prices, proven, its page's downloads fetched."""
    run = proven(submitter, reference_priced)
    block, folder = downloaded(run, live_server, tmp_path)
    return run, block, folder


def test_a_run_priced_with_the_reference_prices_verifies_offline_from_the_downloads(
    reference_download: Downloaded,
) -> None:
    run, block, folder = reference_download
    assert sorted(p.name for p in folder.iterdir()) == [
        "receipt.json",
        "reference-prices-v1.csv",
        "release.tar",
        "trajectory.jsonl",
    ]
    assert any(" --prices reference-prices-v1.csv" in line for line in block.offline)
    checked = shell(block.offline, folder, offline=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out = checked.stdout
    assert "bundle content_digest ok" in out and "trajectory ok" in out
    assert "scores re-derived ok\n" in out  # nothing skipped: the returns too
    assert f"prices reference-prices-v1.csv {run.platform.prices.file_sha256}" in out


def test_a_run_priced_with_its_own_prices_verifies_and_reproduces_its_platform_figures(
    live_server: Any,
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    tmp_path: Path,
) -> None:
    run = proven(submitter, stub_run)
    block, folder = downloaded(run, live_server, tmp_path)
    assert not any("--prices" in line for line in block.offline if " verify " in line)
    checked = shell(block.offline, folder, offline=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "scores re-derived ok" in checked.stdout and "cell_scores skipped" in checked.stdout
    figures = run.platform.figures
    pit = next(c for c in figures["cells"] if (c["arm"], c["clock"]) == ("shifted", "pit"))
    line = next(x for x in checked.stdout.splitlines() if x.split()[:2] == ["shifted", "pit"])
    assert f"trades {pit['trades']:>5}" in line


@pytest.mark.parametrize("tamper", ["trajectory", "release"])
def test_a_tampered_download_fails_verification(
    tamper: str, reference_download: Downloaded
) -> None:
    _, block, folder = reference_download
    untar = [line for line in block.offline if line.startswith("tar ")]
    assert shell(untar, folder, offline=True).returncode == 0
    if tamper == "trajectory":
        target = folder / "trajectory.jsonl"
    else:
        unpacked = next(p for p in folder.iterdir() if p.is_dir())
        target = max(
            (p for p in unpacked.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size
        )
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    verify = [line for line in block.offline if line.startswith("pit-harness verify ")]
    checked = shell(verify, folder, offline=True)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    what = "trajectory MISMATCH" if tamper == "trajectory" else "bundle content_digest MISMATCH"
    assert what in checked.stdout


def test_a_tampered_archive_fails_its_sha256_check_before_anything_runs(
    reference_download: Downloaded,
) -> None:
    _, block, folder = reference_download
    archive = folder / "release.tar"
    data = bytearray(archive.read_bytes())
    data[700] ^= 0x01
    archive.write_bytes(bytes(data))
    check = [line for line in block.online if "release.tar" in line and "sha256sum" in line]
    checked = shell(check, folder, offline=True)
    assert checked.returncode != 0 and "FAILED" in checked.stdout


def test_the_reasoning_audit_is_made_again_offline_with_the_digest_the_page_shows(
    reference_download: Downloaded, live_server: Any
) -> None:
    run, block, folder = reference_download
    sha = run.body_sha256.removeprefix("sha256:")
    with urlopen(f"{live_server.url}/runs/{sha}/?submission={run.pk}", timeout=60) as page:
        text = page.read().decode()
    found = re.search(r'<pre id="audit-commands"[^>]*>(.*?)</pre>', text, re.S)
    assert found is not None
    audit = html.unescape(found[1]).splitlines()
    # the harness of this checkout, the one the site's worker ran
    here = {"PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    checked = shell([*block.offline, *audit], folder, offline=True, env=here)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "reasoning-audit.json: OK" in checked.stdout
    assert (folder / "reasoning-audit.json").read_bytes().startswith(b'{"audit_version":1,')


# -- the certificate, checked in the same folder -------------------------------------------


def certificate_block(run: Run, live_server: Any) -> list[str]:
    sha = run.body_sha256.removeprefix("sha256:")
    with urlopen(f"{live_server.url}/runs/{sha}/?submission={run.pk}", timeout=60) as page:
        text = page.read().decode()
    found = re.search(r'<pre id="certificate-commands"[^>]*>(.*?)</pre>', text, re.S)
    assert found is not None, "the run page offers no certificate"
    return html.unescape(found[1]).splitlines()


def test_the_certificate_verifies_offline_and_fails_once_revoked(
    reference_download: Downloaded, live_server: Any, staff: User
) -> None:
    run, _block, folder = reference_download
    lines = certificate_block(run, live_server)
    online = [line for line in lines if line.startswith("curl ")]
    offline = [line for line in lines if line.startswith("pit-harness ")]
    assert len(online) == 3 and len(offline) == 1
    fetched = shell(online, folder, offline=False)
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    checked = shell(offline, folder, offline=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "receipt ok" in checked.stdout and checked.stdout.rstrip().endswith("certificate ok")
    # one changed byte in the receipt: not the certificate's subject
    receipt = folder / "receipt.json"
    kept = receipt.read_text()
    receipt.write_text(kept.replace('"valid":true', '"valid":false', 1))
    assert shell(offline, folder, offline=True).returncode == 1
    receipt.write_text(kept)
    # staff hide the run: its certificate is revoked, and the new list says so
    run_set_hidden(run=run, staff=staff, hidden=True, reason="the agent was copied")
    refetched = shell([line for line in online if "revocations" in line], folder, offline=False)
    assert refetched.returncode == 0, refetched.stderr
    revoked = shell(offline, folder, offline=True)
    assert revoked.returncode == 1, revoked.stdout
    assert "revocation FAILED" in revoked.stdout and "the agent was copied" in revoked.stdout
