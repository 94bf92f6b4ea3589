"""A board's snapshots form a signed chain: each names the board's snapshot before it in
its digest and is signed by the site, served at /snapshots/<id>/signed.json, and the
downloaded chain checks offline (``harness.attest.snapshots.verify_chain``, ``pit-harness
snapshot verify --keys``) against the site's published keys: an edited byte breaks it,
a row taken down after publication does not, another board's snapshots are no link of
it, and two publications of one board racing cannot fork it."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.test import Client

from harness import canonical
from harness.attest.keys import read_keyset
from harness.attest.snapshots import PREVIOUS, verify_chain
from harness.cli import main
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from harness.snapshot import snapshot_digest
from pitweb.board import services as board_services
from pitweb.board.models import Snapshot
from pitweb.core.signing import published_keys
from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture()
def ranked(
    priced_release: Any, submitter: User, stub_run: Artifacts, picky_run: Artifacts, settings: Any
) -> tuple[Run, Run]:
    """Two ranked runs on one benchmark's board."""
    settings.PITWEB_MIN_RANKED_TRADES = 1
    return submit_run(submitter, stub_run), submit_run(submitter, picky_run)


def _board_of(run: Run) -> dict[str, Any]:
    assert run.benchmark is not None
    return {"benchmark": run.benchmark.key}


def publish(run: Run, staff: User | None = None, **filters: Any) -> Snapshot:
    return board_services.snapshot_publish(
        filters={**_board_of(run), **filters}, reason="cited in a paper", staff=staff
    )


def download(snapshots: list[Snapshot], folder: Path) -> list[Path]:
    """Each snapshot's signed form, as a reader saves it, oldest first."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n, snapshot in enumerate(snapshots, 1):
        response = Client().get(f"/snapshots/{snapshot.pk}/signed.json")
        assert response.status_code == 200, response.content
        assert response["Content-Type"] == "application/json"
        path = folder / f"s{n}.json"
        path.write_bytes(response.content)
        paths.append(path)
    return paths


def keys_file(folder: Path) -> Path:
    path = folder / "pitweb-keys.json"
    path.write_text(json.dumps(published_keys()))
    return path


def cli(paths: list[Path], keys: Path | None) -> int:
    extra = [] if keys is None else ["--keys", str(keys)]
    return main(["snapshot", "verify", *map(str, paths), *extra])


def chain_of(paths: list[Path]) -> list[tuple[str, object]]:
    return [(path.name, json.loads(path.read_text())) for path in paths]


def test_three_snapshots_of_a_board_form_a_chain_that_verifies_offline(
    ranked: tuple[Run, Run], staff: User, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = publish(ranked[0], staff)
    second = publish(ranked[0])  # the schedule's, between two of staff's
    third = publish(ranked[0], staff)
    assert [s.previous_digest for s in (first, second, third)] == [
        None, first.content_digest, second.content_digest,
    ]  # fmt: skip
    # each names its predecessor inside the bytes its digest covers
    for snapshot in (first, second, third):
        body = json.loads(snapshot.content)
        assert body[PREVIOUS] == snapshot.previous_digest
        assert snapshot_digest(body) == snapshot.content_digest
    paths = download([first, second, third], tmp_path)
    check = verify_chain(chain_of(paths), read_keyset(published_keys()))
    assert check.ok, check.lines
    assert check.digests == [first.content_digest, second.content_digest, third.content_digest]
    assert "the board's first snapshot" in check.lines[0]
    assert all("follows the one before" in line for line in check.lines[1:])
    # the command a reader runs, on the files they downloaded
    capsys.readouterr()
    assert cli(paths, keys_file(tmp_path)) == EXIT_OK
    out = capsys.readouterr().out
    assert f"chain ok  3 snapshot(s), newest {third.content_digest}" in out
    # the chain given out of order, or with a link dropped, does not hold
    assert cli([paths[1], paths[0], paths[2]], keys_file(tmp_path)) == EXIT_MISMATCH
    assert cli([paths[0], paths[2]], keys_file(tmp_path)) == EXIT_MISMATCH
    # signed by a key the reader was not given: refused
    other_keys = tmp_path / "other-keys.json"
    other_keys.write_text(
        json.dumps({**published_keys(), "keys": []})
    )  # a key set without the site's key
    assert cli(paths, other_keys) == EXIT_MISMATCH


def test_one_edited_byte_of_a_downloaded_snapshot_breaks_the_chain(
    ranked: tuple[Run, Run], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshots = [publish(ranked[0]) for _ in range(3)]
    paths = download(snapshots, tmp_path)
    text = paths[1].read_text()
    # one digit of a ranked row's figure: a better week for someone
    figure = re.search(r'"platform_shifted_pit":-?\d+\.\d*?(\d)[,}]', text)
    assert figure is not None
    at = figure.start(1)
    edited = text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :]
    assert sum(a != b for a, b in zip(text, edited, strict=True)) == 1
    paths[1].write_text(edited)
    check = verify_chain(chain_of(paths), read_keyset(published_keys()))
    assert not check.ok
    assert check.failed[0].startswith("s2.json:") and "the snapshot was edited" in check.failed[0]
    capsys.readouterr()
    assert cli(paths, keys_file(tmp_path)) == EXIT_MISMATCH
    out = capsys.readouterr().out
    assert "s2.json FAILED" in out and "chain BROKEN" in out
    # its digest alone no longer matches the one it was published with
    assert main(["snapshot", "verify", str(paths[1]), "--digest", snapshots[1].content_digest]) == (
        EXIT_MISMATCH
    )


def test_a_row_withdrawn_after_publication_keeps_the_chain_verifying(
    ranked: tuple[Run, Run], submitter: User, tmp_path: Path
) -> None:
    a, b = ranked
    first = publish(a)
    services.run_withdraw(run=a, owner=submitter, reason="superseded by a better run")
    second = publish(a)
    paths = download([first, second], tmp_path)
    served = paths[0].read_text()
    assert a.run_id not in served and b.run_id in served  # the withdrawn row: its digest only
    assert '"removed_after_snapshot":true' in served
    assert a.run_id not in paths[1].read_text()
    check = verify_chain(chain_of(paths), read_keyset(published_keys()))
    assert check.ok, check.lines
    assert cli(paths, keys_file(tmp_path)) == EXIT_OK


def test_another_boards_snapshots_are_no_link_of_this_boards_chain(
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    longer_window_run: Artifacts,
    tmp_path: Path,
    settings: Any,
) -> None:
    settings.PITWEB_MIN_RANKED_TRADES = 1
    short, longer = submit_run(submitter, stub_run), submit_run(submitter, longer_window_run)
    mine = publish(short)
    theirs = publish(longer)  # another benchmark
    isolated = publish(short, isolated=True)  # this benchmark, another view of it
    again = publish(short)
    assert theirs.previous_digest is None and isolated.previous_digest is None
    assert again.previous_digest == mine.content_digest
    keys = keys_file(tmp_path)
    assert cli(download([mine, again], tmp_path / "mine"), keys) == EXIT_OK
    assert cli(download([mine, theirs], tmp_path / "theirs"), keys) == EXIT_MISMATCH
    assert cli(download([theirs, again], tmp_path / "spliced"), keys) == EXIT_MISMATCH
    # each page says which is its board's first, and links its neighbours
    page = Client().get(f"/snapshots/{mine.pk}/").content.decode()
    assert "The board's first snapshot." in page
    assert f'href="/snapshots/{again.pk}/" id="snapshot-next"' in page
    page = Client().get(f"/snapshots/{again.pk}/").content.decode()
    assert f'href="/snapshots/{mine.pk}/" id="snapshot-previous"' in page
    assert "No later snapshot of this board yet." in page


def test_the_page_and_the_api_say_who_signed_it_and_how_to_check_the_chain(
    ranked: tuple[Run, Run], staff: User
) -> None:
    first, second = publish(ranked[0], staff), publish(ranked[0], staff)
    keyid = next(iter(read_keyset(published_keys())))
    page = Client().get(f"/snapshots/{second.pk}/").content.decode()
    signed_at = json.loads(second.content)["taken_at"][:19] + "Z"
    assert f'Signed by key <code title="{keyid}">{keyid[:16]}</code> at {signed_at}' in page
    assert f"curl -o s1.json http://testserver/snapshots/{first.pk}/signed.json" in page
    assert f"curl -o s2.json http://testserver/snapshots/{second.pk}/signed.json" in page
    assert "pit-harness snapshot verify s1.json s2.json --keys pitweb-keys.json" in page
    assert "curl -o pitweb-keys.json http://testserver/.well-known/pitweb-keys.json" in page
    api = Client().get(f"/api/snapshots/{second.pk}/").json()
    assert api["previous_snapshot"] == first.content_digest
    assert api["signature_url"] == f"http://testserver/snapshots/{second.pk}/signed.json"
    listed = {s["snapshot"]: s for s in Client().get("/api/snapshots/").json()}
    assert listed[first.pk]["previous_snapshot"] is None
    assert listed[second.pk]["signature_url"].endswith(f"/snapshots/{second.pk}/signed.json")
    schema = Client().get("/api/schema/?format=json").json()
    fields = schema["components"]["schemas"]["SnapshotOut"]["properties"]
    assert fields["previous_snapshot"]["nullable"] and fields["signature_url"]["nullable"]


def unsigned(snapshot: Snapshot) -> Snapshot:
    """The snapshot as one published before signing was stored: no predecessor in its
    body, no signature (made here by rewriting the row, as the site never does)."""
    body = json.loads(snapshot.content)
    del body[PREVIOUS]
    Snapshot.objects.filter(pk=snapshot.pk).update(
        content=canonical.line(body), content_digest=snapshot_digest(body),
        previous_digest=None, signature="",
    )  # fmt: skip
    return Snapshot.objects.get(pk=snapshot.pk)


def test_a_snapshot_published_before_signing_is_named_by_the_next_and_not_served_signed(
    ranked: tuple[Run, Run], tmp_path: Path
) -> None:
    old = unsigned(publish(ranked[0]))
    answer = Client().get(f"/snapshots/{old.pk}/signed.json")
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert (
        error["code"] == "not_signed"
        and "published before snapshots were signed" in (error["message"])
    )
    assert Client().get("/snapshots/999999/signed.json").json()["error"]["code"] == "not_found"
    assert Client().get("/snapshots/x/signed.json").status_code == 404
    # its digest still verifies, as before
    text = Client().get(f"/snapshots/{old.pk}/?format=json").content.decode()
    assert (
        main(["snapshot", "verify", _saved(tmp_path, text), "--digest", old.content_digest])
        == EXIT_OK
    )
    new = publish(ranked[0])
    assert new.previous_digest == old.content_digest
    # the chain starts at the first signed snapshot, which names the old one
    check = verify_chain(chain_of(download([new], tmp_path)), read_keyset(published_keys()))
    assert check.ok and f"(after {old.content_digest}, not given)" in check.lines[0]
    page = Client().get(f"/snapshots/{old.pk}/").content.decode()
    assert "Published before snapshots were signed" in page
    assert f'href="/snapshots/{new.pk}/" id="snapshot-next"' in page
    page = Client().get(f"/snapshots/{new.pk}/").content.decode()
    assert "published before snapshots were signed" in page  # of its predecessor
    api = Client().get(f"/api/snapshots/{old.pk}/").json()
    assert api["signature_url"] is None and api["previous_snapshot"] is None


def _saved(folder: Path, text: str) -> str:
    path = folder / "old.json"
    path.write_text(text)
    return str(path)


# -- a fork of the chain, refused ----------------------------------------------------------


def _copy(snapshot: Snapshot, **fields: Any) -> Snapshot:
    """Another row of the same board, made behind the service's back."""
    given = {
        f.name: getattr(snapshot, f.name)
        for f in Snapshot._meta.concrete_fields
        if f.name not in ("id", "content_digest")
    }
    return Snapshot.objects.create(**{**given, "content_digest": "sha256:" + "f" * 64, **fields})


def test_the_database_refuses_two_snapshots_following_one(ranked: tuple[Run, Run]) -> None:
    first = publish(ranked[0])
    second = publish(ranked[0])
    with pytest.raises(IntegrityError), transaction.atomic():
        _copy(second, previous_digest=first.content_digest)  # a second successor of first
    with pytest.raises(IntegrityError), transaction.atomic():
        _copy(first, previous_digest=None)  # a second first snapshot of the board
    # another board may follow nothing, and an unsigned row names nothing
    _copy(first, filters_key='{"another":"board"}', previous_digest=None)
    _copy(first, content_digest="sha256:" + "e" * 64, previous_digest=None, signature="")


def test_two_publications_of_one_board_racing_do_not_fork_its_chain(
    ranked: tuple[Run, Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("two writers at once: Postgres (CI sets DATABASE_URL)")
    seed = publish(ranked[0])
    # both publications read the board's newest snapshot before either writes
    both_read = threading.Barrier(2, timeout=60)
    tip = board_services._chain_tip
    first_reads: set[int] = set()

    def racing_tip(key: str) -> str | None:
        found = tip(key)
        if threading.get_ident() not in first_reads:
            first_reads.add(threading.get_ident())
            both_read.wait()
        return found

    monkeypatch.setattr(board_services, "_chain_tip", racing_tip)
    write = board_services._publish
    refused: list[IntegrityError] = []

    def counted_write(*args: Any, **kwargs: Any) -> Snapshot:
        try:
            return write(*args, **kwargs)
        except IntegrityError as exc:
            refused.append(exc)
            raise

    monkeypatch.setattr(board_services, "_publish", counted_write)
    made: list[Snapshot] = []
    failed: list[BaseException] = []

    def publisher() -> None:
        try:
            made.append(publish(ranked[0]))
        except BaseException as exc:  # reported below, in the test's thread
            failed.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=publisher) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failed, failed
    assert len(first_reads) == 2  # both read the same newest snapshot, then raced
    # the database refused the second to follow the seed: it published again
    assert len(refused) == 1 and "snapshot_one_successor" in str(refused[0])
    rows = list(Snapshot.objects.order_by("id"))
    assert len(rows) == 3
    # no two name the same predecessor: one followed the seed, and the one that lost the
    # race published again, after the winner, with the board taken again
    ordered = [seed]
    for _ in rows[1:]:
        ordered.append(next(s for s in rows if s.previous_digest == ordered[-1].content_digest))
    assert [s.pk for s in ordered] == [s.pk for s in rows]
    assert ordered[1].taken_at < ordered[2].taken_at
    paths = download(ordered, tmp_path)
    assert cli(paths, keys_file(tmp_path)) == EXIT_OK
