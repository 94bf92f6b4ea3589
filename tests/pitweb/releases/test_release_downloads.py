"""A release's downloads: its files as one archive (the same bytes every time, the size
and sha256 its page shows, unpacking to the release's content digest) and each
reference-price version as a CSV whose bytes hash to the sha256 shown beside it."""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.test import Client

from harness.release.bundle import Bundle
from pitweb.releases.models import Release

pytestmark = pytest.mark.django_db


def streamed(response: Any) -> bytes:
    assert response.status_code == 200, response
    return b"".join(response.streaming_content)


def archive_url(release: Release) -> str:
    return f"/releases/{release.digest_hex}/archive.tar"


def test_the_archive_is_the_same_bytes_as_its_page_says_every_time(priced_release: Release) -> None:
    first = Client().get(archive_url(priced_release))
    body = streamed(first)
    priced_release.refresh_from_db()
    sha = "sha256:" + hashlib.sha256(body).hexdigest()
    assert first["Content-Length"] == str(len(body)) == str(priced_release.archive_size)
    assert sha == priced_release.archive_sha256
    assert streamed(Client().get(archive_url(priced_release))) == body
    page = Client().get(f"/releases/{priced_release.digest_hex}/").content.decode()
    assert sha in page and f"({len(body)} bytes)" in page
    assert priced_release.content_digest in page


def test_the_archive_unpacks_into_one_folder_holding_the_release(
    priced_release: Release, tmp_path: Path
) -> None:
    body = streamed(Client().get(archive_url(priced_release)))
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:
        names = tar.getnames()
        assert all(re.fullmatch(r"release-[0-9a-f]{12}/[\w./-]+", n) for n in names), names
        assert all(m.isfile() and m.mtime > 0 and m.uid == 0 for m in tar.getmembers())
        tar.extractall(tmp_path / "unpacked", filter="data")
    (folder,) = (tmp_path / "unpacked").iterdir()
    bundle = Bundle.load(folder)
    assert bundle.check() == []
    assert bundle.content_digest == priced_release.content_digest


def test_head_of_the_archive_answers_its_headers_without_the_body(
    priced_release: Release,
) -> None:
    response = Client().head(archive_url(priced_release))
    priced_release.refresh_from_db()
    assert response.status_code == 200 and response.content == b""
    assert response["Content-Length"] == str(priced_release.archive_size)
    assert response["ETag"] == f'"{priced_release.archive_sha256[7:]}"'


def test_an_archive_of_a_release_the_site_does_not_hold_is_a_404(
    registered: Release,
) -> None:
    for method in ("get", "head"):
        response = getattr(Client(), method)(f"/releases/{'ab' * 32}/archive.tar")
        assert response.status_code == 404, method
    default_storage.delete(f"{registered.storage_prefix}/manifest.json")
    assert Client().get(archive_url(registered)).status_code == 404
    assert Client().head(archive_url(registered)).status_code == 404
    page = Client().get(f"/releases/{registered.digest_hex}/")
    assert page.status_code == 200 and "does not hold the release's files" in page.content.decode()


def test_an_archive_is_only_read(priced_release: Release) -> None:
    response = Client().post(archive_url(priced_release))
    assert response.status_code == 405


def test_each_price_version_downloads_as_the_bytes_its_sha256_names(
    priced_release: Release, reference_file: Path
) -> None:
    (prices,) = priced_release.reference_prices.all()
    url = f"/releases/{priced_release.digest_hex}/prices/v{prices.version}.csv"
    page = Client().get(f"/releases/{priced_release.digest_hex}/").content.decode()
    link = page.index(f'href="{url}"')
    assert prices.file_sha256 in page[link : link + 400]  # shown beside its link
    body = b"".join(Client().get(url).streaming_content)
    assert "sha256:" + hashlib.sha256(body).hexdigest() == prices.file_sha256
    assert body == reference_file.read_bytes()
    listed = Client().get(f"/api/releases/{priced_release.digest_hex}/prices/").json()
    assert listed[0]["csv"] == url and listed[0]["file_sha256"] == prices.file_sha256


def test_a_price_version_that_is_not_registered_is_a_404(priced_release: Release) -> None:
    base = f"/releases/{priced_release.digest_hex}/prices/"
    for version in ("2", "0", "-1", "01x", "9" * 30, "²", "%00", "1.csv/.."):
        response = Client().get(f"{base}v{version}.csv")
        assert response.status_code == (400 if version == "%00" else 404), version
