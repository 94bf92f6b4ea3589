"""Artifacts in an S3-compatible object store (moto's standalone server on loopback), and
a real worker on another 'machine': it sees none of the web process's folders, only the
database, the broker and the bucket."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from pitweb.pricing.models import PlatformScore
from pitweb.runs.models import JobState
from tests.pitweb.conftest import Artifacts, submit_run
from tests.pitweb.jobs.test_worker_integration import (
    real_broker_clean,
    stop,
    wait_for,
    worker,
    worker_env,
)

pytestmark = pytest.mark.django_db(transaction=True)
BUCKET = "pitweb-artifacts"
KEYS = {"PITWEB_S3_ACCESS_KEY_ID": "testing", "PITWEB_S3_SECRET_ACCESS_KEY": "testing"}


@pytest.fixture()
def object_store(tmp_path: Path) -> Iterator[str]:
    """moto's S3 server on a free loopback port, with an empty bucket."""
    import boto3

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(tmp_path / "moto.log", "wb")  # noqa: SIM115 - owned by the process
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            client.create_bucket(Bucket=BUCKET)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise AssertionError((tmp_path / "moto.log").read_text()) from None
            time.sleep(0.2)
    yield url
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=30)


def test_upload_verify_price_and_download_with_artifacts_in_an_object_store(
    object_store: str,
    settings: Any,
    site_release: Path,
    reference_file: Path,
    submitter: User,
    stub_run: Artifacts,
    tmp_path: Path,
    eager_celery: None,
) -> None:
    import boto3

    from pitweb import celery_app
    from pitweb.pricing.services import reference_prices_register
    from pitweb.releases.services import release_register

    options = {
        "bucket_name": BUCKET,
        "endpoint_url": object_store,
        "region_name": "us-east-1",
        "access_key": "testing",
        "secret_key": "testing",
        "file_overwrite": False,
        "default_acl": None,
    }
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options},
    }
    celery_app.conf.task_always_eager = False
    real_broker_clean()
    # the worker's own machine: no web folders (the artifact folder does not exist), its
    # own release cache; the database, the broker and the bucket are shared
    env = {
        **worker_env(tmp_path / "no-such-folder"),
        **KEYS,
        "PITWEB_S3_BUCKET": BUCKET,
        "PITWEB_S3_ENDPOINT_URL": object_store,
        "PITWEB_S3_REGION": "us-east-1",
        "PITWEB_RELEASE_CACHE": str(tmp_path / "worker-release-cache"),
    }
    log = tmp_path / "worker.log"
    process = worker(env, log, "remote")
    try:
        release, _ = release_register(path=site_release)
        reference_prices_register(
            release=release, path=reference_file, source="SYNTHETIC", pulled_at="",
            staff=None, reason="reference prices in the bucket",
        )  # fmt: skip
        run = submit_run(submitter, stub_run)
        job = run.jobs.get()

        def verified() -> bool:
            job.refresh_from_db()
            return job.state == JobState.VERIFIED

        wait_for(verified, "the remote worker to verify", log)
        wait_for(
            lambda: PlatformScore.objects.filter(run=run, state="scored").exists(),
            "the remote worker to price the run",
            log,
        )
    finally:
        stop(process)
    assert not (tmp_path / "no-such-folder").exists()
    assert (tmp_path / "worker-release-cache" / release.digest_hex / "manifest.json").exists()
    keys = {
        item["Key"]
        for item in boto3.client(
            "s3", endpoint_url=object_store, region_name="us-east-1",
            aws_access_key_id="testing", aws_secret_access_key="testing",
        ).list_objects_v2(Bucket=BUCKET)["Contents"]
    }  # fmt: skip
    assert run.trajectory_name in keys and run.receipt_name in keys
    assert f"{release.storage_prefix}/manifest.json" in keys
    sha = run.body_sha256[7:]
    download = Client().get(f"/runs/{sha}/download/trajectory")
    assert b"".join(download.streaming_content) == stub_run.trajectory.read_bytes()
    page = Client().get(f"/releases/{release.digest_hex}/").content.decode()
    assert 'id="fig-rows"' in page  # its index read from the bucket
