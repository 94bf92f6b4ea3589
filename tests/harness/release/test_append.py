"""Releases that grow: a version keeps its parent's bytes and adds later days; versions
verify as a chain; a changed parent row, a backdated row, a repeated filing or a foreign
secret is refused."""

from __future__ import annotations

import itertools
import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.release.append import append_edgar, append_release, append_synthetic
from harness.release.bundle import Bundle
from harness.release.chain import verify_chain
from harness.release.edgar import build_release
from harness.release.keys import synthetic_secret
from harness.release.store import INDEX, MANIFEST, ReleaseError
from harness.release.synth import synth_release
from tests.support.data import issuer_offset, reseal_after_edit, shared_path

ARM_FILES = ("main.jsonl", "redacted.jsonl", "shifted.jsonl")
SEED = 11
SECRET = bytes(range(32))


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A synthetic release (2023-03-01..03-10, a Friday) and two versions of it."""
    root = tmp_path_factory.mktemp("chain")
    v1 = root / "v1"
    synth_release(v1, start=date(2023, 3, 1), end=date(2023, 3, 10), seed=SEED, rows=400)
    append_synthetic(v1, root / "v2", days=2)
    append_synthetic(root / "v2", root / "v3", days=3)
    return [v1, root / "v2", root / "v3"]


def _manifest(root: Path) -> dict[str, Any]:
    return json.loads((root / MANIFEST).read_text())


def test_a_release_appended_twice_verifies_as_a_chain(chain: list[Path]) -> None:
    assert verify_chain(chain) == []
    assert main(["release", "verify-chain", *map(str, chain)]) == 0


def test_each_version_starts_with_its_parents_bytes(chain: list[Path]) -> None:
    for parent, child in itertools.pairwise(chain):
        for name in ARM_FILES:
            old, new = (parent / name).read_bytes(), (child / name).read_bytes()
            assert len(new) > len(old) and new[: len(old)] == old
        old_segments = json.loads((parent / INDEX).read_bytes())["segments"]
        new_segments = json.loads((child / INDEX).read_bytes())["segments"]
        assert new_segments[: len(old_segments)] == old_segments


def test_a_version_names_its_parent_and_the_days_it_added(chain: list[Path]) -> None:
    v1, v2, v3 = (_manifest(p) for p in chain)
    assert v2["parent"] == {"content_digest": v1["content_digest"], "name": v1["name"]}
    assert v3["parent"]["content_digest"] == v2["content_digest"]
    # 2023-03-10 is a Friday: the next two business days are Monday and Tuesday
    assert v2["sessions_added"] == ["2023-03-13", "2023-03-14"]
    assert v2["window"] == {"start": "2023-03-01", "end": "2023-03-14"}
    assert v3["window"]["end"] == "2023-03-17"
    assert v1["name"] == v2["name"] == v3["name"]
    assert v2["row_counts"]["total"] == v1["row_counts"]["total"] + v2["added"]["rows"]
    rows = Bundle.load(chain[1]).rows("main")
    added = [r for r in rows if r["partition_date"] > "2023-03-10"]
    assert len(added) == v2["added"]["rows"]
    assert {r["partition_date"] for r in added} == set(v2["sessions_added"])


def test_appended_rows_are_new_filings_of_the_lines_filers(chain: list[Path]) -> None:
    rows = Bundle.load(chain[2]).rows("main")
    accessions = [r["accession"] for r in rows]
    assert len(set(accessions)) == len(accessions)
    before = {r["issuer"] for r in rows if r["partition_date"] <= "2023-03-10"}
    after = {r["issuer"] for r in rows if r["partition_date"] > "2023-03-10"}
    assert after and after <= before | after and len(after & before) > len(after) // 2


def test_synth_append_with_the_same_arguments_writes_the_same_bytes(
    chain: list[Path], tmp_path: Path
) -> None:
    assert main(["release", "synth-append", "--to", str(chain[0]), "--days", "2",
                 "--out", str(tmp_path / "again")]) == 0  # fmt: skip
    for name in (*ARM_FILES, INDEX, MANIFEST):
        assert (tmp_path / "again" / name).read_bytes() == (chain[1] / name).read_bytes()


def test_a_changed_parent_row_in_a_resealed_version_breaks_the_chain(
    chain: list[Path], tmp_path: Path
) -> None:
    forged = tmp_path / "v2"
    shutil.copytree(chain[1], forged)
    offset = issuer_offset(forged)
    original = (forged / "main.jsonl").read_bytes()[offset : offset + 1]
    reseal_after_edit(forged, offset, b"Z" if original != b"Z" else b"Y")
    assert Bundle.load(forged).check() == []  # intact on its own
    problems = verify_chain([chain[0], forged])
    assert any("main.jsonl: the first" in p and "parent row was changed" in p for p in problems)
    assert any("parent's segments are not kept" in p for p in problems)
    assert main(["release", "verify-chain", str(chain[0]), str(forged)]) == 1


def test_a_changed_parent_row_is_refused_by_append(chain: list[Path], tmp_path: Path) -> None:
    parent = tmp_path / "v1"
    shutil.copytree(chain[0], parent)
    offset = issuer_offset(parent)
    data = bytearray((parent / "main.jsonl").read_bytes())
    data[offset] ^= 0x01
    (parent / "main.jsonl").write_bytes(bytes(data))
    with pytest.raises(ReleaseError, match="fails its own check"):
        append_synthetic(parent, tmp_path / "v2", days=1)
    assert not (tmp_path / "v2").exists()


def test_versions_out_of_order_or_skipping_one_break_the_chain(chain: list[Path]) -> None:
    assert any("names parent" in p for p in verify_chain([chain[0], chain[2]]))
    assert any("names parent" in p for p in verify_chain([chain[1], chain[0]]))


def test_verify_chain_of_a_missing_folder_is_bad_input(chain: list[Path], tmp_path: Path) -> None:
    assert main(["release", "verify-chain", str(chain[0]), str(tmp_path / "nowhere")]) == 2


def _row(accession: str, day: str) -> dict[str, Any]:
    return {
        "row_key": "",
        "accession": accession,
        "form": "8-K",
        "cik": "0000000042",
        "issuer": "Example Corp.",
        "ticker": None,
        "title": f"8-K - Example Corp. (0000000042) (Filer) {day}",
        "partition_date": day,
        "published_at": day,
        "acceptance_at": None,
        "filename": f"edgar/data/42/{accession}.txt",
    }


def _append(parent: Path, out: Path, rows: list[dict[str, Any]], secret: bytes) -> None:
    append_release(
        parent, out, rows=rows, row_key_secret=secret, provenance="test", source={"kind": "test"}
    )


def test_a_row_dated_inside_the_parents_window_is_refused(
    chain: list[Path], tmp_path: Path
) -> None:
    secret = synthetic_secret(SEED)
    rows = [_row("0000000042-23-900001", "2023-03-20"), _row("0000000042-23-900002", "2023-03-17")]
    with pytest.raises(ReleaseError, match="inside or before the parent's window"):
        _append(chain[2], tmp_path / "v4", rows, secret)
    assert not (tmp_path / "v4").exists()


def test_a_filing_the_parent_holds_is_refused(chain: list[Path], tmp_path: Path) -> None:
    held = Bundle.load(chain[0]).rows("main")[0]["accession"]
    with pytest.raises(ReleaseError, match="already in the parent"):
        _append(chain[2], tmp_path / "v4", [_row(held, "2023-03-20")], synthetic_secret(SEED))


def test_another_secret_than_the_lines_is_refused(chain: list[Path], tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="not the parent's"):
        _append(chain[2], tmp_path / "v4", [_row("0000000042-23-900001", "2023-03-20")], SECRET)


def test_appending_over_the_parent_itself_is_refused(chain: list[Path]) -> None:
    with pytest.raises(ReleaseError, match="new folder"):
        _append(chain[2], chain[2], [_row("0000000042-23-900001", "2023-03-20")], SECRET)


def test_a_real_edgar_release_grows_by_a_later_daily_index(tmp_path: Path) -> None:
    """form.20200318.idx builds the release; company.20221003.idx is appended through the
    CLI with the secret file the build made, and the two verify as a chain."""
    v1 = tmp_path / "v1"
    assert main(["release", "build", "--edgar-index", str(shared_path("data", "edgar",
                 "form.20200318.idx")), "--name", "edgar", "--out", str(v1)]) == 0  # fmt: skip
    v2 = tmp_path / "v2"
    index = shared_path("data", "edgar", "company.20221003.idx")
    assert main(["release", "append", "--to", str(v1), "--edgar-index", str(index),
                 "--out", str(v2)]) == 0  # fmt: skip
    manifest = _manifest(v2)
    # the daily index of 2022-10-03 also lists filings dated in September
    assert manifest["sessions_added"] == ["2022-09-08", "2022-09-30", "2022-10-03"]
    assert manifest["added"]["source"]["index_files"][0]["name"] == index.name
    assert verify_chain([v1, v2]) == []
    # the same index again: every filing is already there and its date inside the window
    assert main(["release", "append", "--to", str(v2), "--edgar-index", str(index),
                 "--out", str(tmp_path / "v3")]) == 2  # fmt: skip


def test_append_without_the_lines_secret_file_is_refused(tmp_path: Path) -> None:
    v1 = tmp_path / "v1"
    build_release(v1, index_files=[shared_path("data", "edgar", "form.20200318.idx")],
                  name="edgar", row_key_secret=SECRET)  # fmt: skip
    index = shared_path("data", "edgar", "company.20221003.idx")
    # no <v1>.row-key-secret beside it: append never makes a new secret
    assert main(["release", "append", "--to", str(v1), "--edgar-index", str(index),
                 "--out", str(tmp_path / "v2")]) == 2  # fmt: skip
    assert not (tmp_path / "v2").exists()
    assert not Path(str(v1) + ".row-key-secret").exists()
    secret = tmp_path / "secret"
    secret.write_text(SECRET.hex() + "\n")
    manifest = append_edgar(v1, tmp_path / "v2", index_files=[index], row_key_secret=SECRET)
    assert main(["release", "append", "--to", str(v1), "--edgar-index", str(index),
                 "--row-key-secret", str(secret), "--out", str(tmp_path / "v2b")]) == 0  # fmt: skip
    assert _manifest(tmp_path / "v2b")["content_digest"] == manifest["content_digest"]


def test_a_daily_index_listing_earlier_days_is_refused_or_left_out_and_counted(
    tmp_path: Path,
) -> None:
    """A release up to 2022-09-30 grown by the real daily index of 2022-10-03, which
    lists a few filings dated in September: refused by default; left out and counted
    with --leave-out-backdated."""
    index = shared_path("data", "edgar", "company.20221003.idx")
    lines = index.read_text(encoding="latin-1").splitlines()
    backdated = sum(1 for line in lines if " 202209" in line)
    assert backdated > 0
    v1 = tmp_path / "v1"
    synth_release(v1, start=date(2022, 9, 26), end=date(2022, 9, 30), seed=SEED, rows=50)
    secret = synthetic_secret(SEED)
    with pytest.raises(ReleaseError, match="inside or before the parent's window"):
        append_edgar(v1, tmp_path / "v2", index_files=[index], row_key_secret=secret)
    manifest = append_edgar(
        v1, tmp_path / "v2", index_files=[index], row_key_secret=secret, leave_out_backdated=True
    )
    assert manifest["sessions_added"] == ["2022-10-03"]
    assert manifest["added"]["source"]["backdated_left_out"] == backdated
    assert verify_chain([v1, tmp_path / "v2"]) == []
