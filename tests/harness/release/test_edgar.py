import gzip
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.release.bundle import Bundle
from harness.release.edgar import build_release, parse_acceptance, parse_master_index
from harness.release.store import MANIFEST, ReleaseError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "edgar"
FULL = FIXTURES / "master.idx"
DAILY = FIXTURES / "master.20230301.idx"
HEADERS = FIXTURES / "headers.txt"
TICKERS = {"0000731766": "SMCO", "1045112": "HLTX", "1412087": "ORCB", "1108134": "MGBC"}
FORM4 = "0000950170-23-006120"
SECRET = bytes(range(32))
SC13G = "0000932471-23-003317"

HEADER = (
    "Description:           Master Index of EDGAR Dissemination Feed\n"
    "Last Data Received:    March 31, 2023\n"
    "Comments:              webmaster@sec.gov\n"
    "\n"
    "CIK|Company Name|Form Type|Date Filed|Filename\n"
    "--------------------------------------------------------------------------------\n"
)
SUMMIT = "731766|Summit Cobalt Industries Inc"
GOOD_ROW = f"{SUMMIT}|8-K|2023-03-01|edgar/data/731766/0000731766-23-000015.txt\n"


def _build(out: Path, **kwargs: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "index_files": [FULL, DAILY],
        "acceptance_files": [HEADERS],
        "name": "edgar-2023q1",
        "tickers": TICKERS,
        "row_key_secret": SECRET,
    }
    args.update(kwargs)
    return build_release(out, **args)


def _by_accession(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["accession"]: r for r in rows}


def test_parse_both_layouts_and_latin1_names() -> None:
    full, daily = parse_master_index(FULL), parse_master_index(DAILY)
    assert len(full) == 15 and len(daily) == 6
    assert full[0]["line"] == 12  # found by the column line, after a free-text header
    assert {d["date_filed"] for d in daily} == {"2023-03-01"}  # YYYYMMDD read as ISO
    orchid = next(d for d in full if d["cik"] == "0001412087")
    assert orchid["issuer"] == "Orchidée Brands Ltd."
    assert FULL.read_bytes().count(b"Orchid\xe9e") == 2  # the fixture really is latin-1


def test_release_loads_with_one_row_per_filing(tmp_path: Path) -> None:
    manifest = _build(tmp_path / "rel")
    listings = parse_master_index(FULL) + parse_master_index(DAILY)
    unique = {d["accession"] for d in listings}
    bundle = Bundle.load(tmp_path / "rel")
    rows = bundle.rows("main")
    assert len(rows) == len(unique) == 15
    assert len({r["row_key"] for r in rows}) == len(rows)
    assert manifest["source"]["folded_duplicate_listings"] == len(listings) - len(unique) == 6
    assert manifest["window"] == {"start": "2023-01-05", "end": "2023-03-30"}
    # Form 4 and SC 13G: every listing's path names its own CIK, so the listed company
    # (the one with a ticker) wins over the reporting owner / filer listed first.
    form4, sc13g = _by_accession(rows)[FORM4], _by_accession(rows)[SC13G]
    assert (form4["cik"], form4["ticker"], form4["issuer"]) == (
        "0000731766",
        "SMCO",
        "Summit Cobalt Industries Inc",
    )
    assert form4["title"] == "4 - Summit Cobalt Industries Inc (0000731766) (Filer)"
    assert sc13g["cik"] == "0001108134"
    assert manifest["source"]["index_files"][1]["name"] == "master.20230301.idx"
    assert str(FIXTURES) not in json.dumps(manifest)


def test_without_tickers_the_first_listing_is_kept(tmp_path: Path) -> None:
    _build(tmp_path / "rel", tickers=None)
    form4 = _by_accession(Bundle.load(tmp_path / "rel").rows("main"))[FORM4]
    assert form4["cik"] == "0001214156" and form4["ticker"] is None


def test_listing_whose_path_names_its_own_cik_wins(tmp_path: Path) -> None:
    path = tmp_path / "master.idx"
    path.write_text(
        HEADER
        + "1214156|Okafor Adaeze M|4|2023-03-01|edgar/data/731766/0000950170-23-006120.txt\n"
        + f"{SUMMIT}|4|2023-03-01|edgar/data/731766/0000950170-23-006120.txt\n"
    )
    manifest = build_release(tmp_path / "rel", index_files=[path], name="t", row_key_secret=SECRET)
    [row] = Bundle.load(tmp_path / "rel").rows("main")
    assert row["cik"] == "0000731766"
    assert manifest["source"]["folded_duplicate_listings"] == 1


def test_acceptance_offsets_follow_new_york_dst(tmp_path: Path) -> None:
    stamps = parse_acceptance(HEADERS)
    assert len(stamps) == 5
    manifest = _build(tmp_path / "rel")
    rows = _by_accession(Bundle.load(tmp_path / "rel").rows("main"))
    assert rows["0000731766-23-000015"]["acceptance_at"] == "2023-03-01T16:31:02-05:00"
    assert rows[FORM4]["acceptance_at"] == "2023-03-01T18:45:12-05:00"
    assert rows["0001045112-23-000009"]["acceptance_at"] == "2023-03-14T08:05:00-04:00"
    assert rows["0000950431-23-000018"]["acceptance_at"] == "2023-03-30T17:01:02-04:00"
    assert rows["0001412087-23-000007"]["acceptance_at"] is None
    assert manifest["row_counts"]["acceptance_stamped"] == 4
    assert manifest["source"]["unmatched_acceptance"] == 1
    assert "4 of 15 rows carry acceptance stamps" in manifest["provenance"]


def test_redacted_arm_names_no_filer(tmp_path: Path) -> None:
    _build(tmp_path / "rel")
    bundle = Bundle.load(tmp_path / "rel")
    main = _by_accession(bundle.rows("main"))
    redacted = bundle.rows("redacted")
    assert sum(1 for r in main.values() if r["ticker"]) == 9
    by_key = {m["row_key"]: m for m in main.values()}
    join = bundle.to_main("redacted")
    for row in redacted:
        assert row["row_key"] not in by_key  # a redacted row's key names no main row
        source = by_key[join[row["row_key"]]]
        text = [v for v in row.values() if isinstance(v, str)]
        for value in text:
            assert source["issuer"].casefold() not in value.casefold()
            assert source["cik"].lstrip("0") not in value
            if source["ticker"]:
                assert not re.search(rf"\b{source['ticker']}\b", value, re.I)
        assert row["issuer"] is None and row["cik"] is None and row["filename"] is None


def test_shifted_arm_moves_every_year(tmp_path: Path) -> None:
    _build(tmp_path / "rel")
    bundle = Bundle.load(tmp_path / "rel")
    for main, shifted in zip(bundle.rows("main"), bundle.rows("shifted"), strict=True):
        assert not any("2023" in v for v in shifted.values() if isinstance(v, str))
        assert shifted["accession"] == main["accession"].replace("-23-", "-33-")
        assert "-33-" in shifted["filename"]
    trust = next(r for r in bundle.rows("shifted") if "Receivables" in r["issuer"])
    assert trust["issuer"].endswith("2031-A")


def test_same_inputs_same_bytes(tmp_path: Path) -> None:
    a, b = _build(tmp_path / "a"), _build(tmp_path / "b")
    assert a["content_digest"] == b["content_digest"]
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert MANIFEST in names and len(names) == 5
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_gzipped_index_is_accepted(tmp_path: Path) -> None:
    packed = tmp_path / "master.idx.gz"
    packed.write_bytes(gzip.compress(FULL.read_bytes(), mtime=0))
    plain = _build(tmp_path / "plain", index_files=[FULL])
    zipped = _build(tmp_path / "gz", index_files=[packed])
    assert parse_master_index(packed) == parse_master_index(FULL)
    assert zipped["source"]["index_files"][0]["name"] == "master.idx.gz"
    assert zipped["files"] == plain["files"]


@pytest.mark.parametrize(
    ("body", "line", "says"),
    [
        (HEADER + GOOD_ROW + "884591|Pioneer Quarry Realty Trust|10-K|2023-02-28\n", 8, "5"),
        (HEADER + GOOD_ROW.replace("2023-03-01", "2023-02-30"), 7, "Date Filed"),
        (HEADER + GOOD_ROW.replace("2023-03-01", "03/01/2023"), 7, "Date Filed"),
        (HEADER + "73176x" + GOOD_ROW[6:], 7, "CIK"),
        (HEADER + GOOD_ROW.replace("0000731766-23-000015.txt", "index.htm"), 7, "accession"),
        ("Description: no header here\n" + GOOD_ROW, 2, "column line"),
        ("Description: no header here\n\n", 2, "column line"),
    ],
)
def test_malformed_index_names_file_and_line(
    tmp_path: Path, body: str, line: int, says: str
) -> None:
    path = tmp_path / "broken.idx"
    path.write_text(body)
    with pytest.raises(ReleaseError, match=rf"broken\.idx, line {line}: .*{says}"):
        build_release(tmp_path / "rel", index_files=[FULL, path], name="t", row_key_secret=SECRET)


@pytest.mark.parametrize(
    ("stamp", "line"),
    [("2023030116310", 2), ("20230230163102", 2), ("2023-03-01 16:31:02", 2)],
)
def test_malformed_acceptance_names_file_and_line(tmp_path: Path, stamp: str, line: int) -> None:
    path = tmp_path / "bad.hdr.sgml"
    path.write_text(
        f"<SEC-HEADER>0000731766-23-000015.hdr.sgml : 20230301\n<ACCEPTANCE-DATETIME>{stamp}\n"
        "ACCESSION NUMBER:\t\t0000731766-23-000015\n</SEC-HEADER>\n"
    )
    with pytest.raises(ReleaseError, match=rf"bad\.hdr\.sgml, line {line}: ACCEPTANCE-DATETIME"):
        _build(tmp_path / "rel", acceptance_files=[HEADERS, path])


def test_conflicting_acceptance_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "again.txt"
    shutil.copy(HEADERS, path)
    text = path.read_text().replace("20230301163102", "20230301163103")
    path.write_text(text)
    with pytest.raises(ReleaseError, match=r"again\.txt, line 3: accession 0000731766-23-000015"):
        _build(tmp_path / "rel", acceptance_files=[HEADERS, path])


# -- keyed row keys ---------------------------------------------------------------------


def _hashes(text: str) -> set[str]:
    data = text.encode()
    return {
        hashlib.new(name, data).hexdigest()[:16]
        for name in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "sha3_256")
    }


def test_no_row_key_is_a_hash_of_its_accession_real_or_shifted(tmp_path: Path) -> None:
    _build(tmp_path / "rel")
    bundle = Bundle.load(tmp_path / "rel")
    main = bundle.rows("main")
    arms = {arm: bundle.rows(arm) for arm in ("main", "redacted", "shifted")}
    assert main
    for n, row in enumerate(main):
        accession = row["accession"]
        year = accession.split("-")[1]
        candidates = {accession, accession.replace(f"-{year}-", f"-{int(year) + 10:02d}-")}
        candidates |= {arms["shifted"][n].get("accession") or "", accession.replace("-", "")}
        candidates |= {f"{arm}\x00{c}" for arm in ("redacted", "shifted") for c in set(candidates)}
        for arm, rows in arms.items():
            key = rows[n]["row_key"].removeprefix("r-")
            for text in candidates - {""}:
                assert key not in _hashes(text), (arm, rows[n]["row_key"], text)


def test_a_rebuild_with_the_same_secret_writes_the_same_bytes_another_secret_other_keys(
    tmp_path: Path,
) -> None:
    a = _build(tmp_path / "a")
    b = _build(tmp_path / "b", row_key_secret=bytes(32))
    keys_a = [r["row_key"] for r in Bundle.load(tmp_path / "a").rows("main")]
    keys_b = [r["row_key"] for r in Bundle.load(tmp_path / "b").rows("main")]
    assert a["content_digest"] != b["content_digest"]
    assert len(keys_a) == len(keys_b) and not set(keys_a) & set(keys_b)
    assert "HMAC-SHA256" in a["source"]["row_keys"]
    assert SECRET.hex() not in (tmp_path / "a" / MANIFEST).read_text()


def test_the_cli_keeps_the_secret_beside_the_release_with_mode_0600(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    argv = ["release", "build", "--edgar-index", str(FULL), "--name", "t"]
    assert main([*argv, "--out", str(tmp_path / "rel")]) == 0
    secret = tmp_path / "rel.row-key-secret"
    assert secret.stat().st_mode & 0o777 == 0o600
    assert "rel.row-key-secret (new, mode 0600)" in capsys.readouterr().out
    assert not any("secret" in p.name for p in (tmp_path / "rel").iterdir())
    # the same secret rebuilds the same bytes
    assert main([*argv, "--out", str(tmp_path / "again"), "--row-key-secret", str(secret)]) == 0
    for name in ("main.jsonl", "shifted.jsonl", MANIFEST):
        assert (tmp_path / "rel" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()
    # a secret inside the release folder, or one that is not 64 hex digits, is refused
    inside = ["--out", str(tmp_path / "x"), "--row-key-secret", str(tmp_path / "x" / "k")]
    assert main([*argv, *inside]) == 2
    bad = tmp_path / "bad"
    bad.write_text("not hex\n")
    assert main([*argv, "--out", str(tmp_path / "y"), "--row-key-secret", str(bad)]) == 2
    assert "64 hex digits" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
