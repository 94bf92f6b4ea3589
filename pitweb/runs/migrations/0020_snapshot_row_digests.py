"""Snapshots published before row digests (version 1: the digest was the sha256 of the
whole text) become version 2, whose digest covers each row's digest (harness.snapshot),
so a row withdrawn or hidden later can be removed from them too and they still verify
offline. The digest each was published with is kept inside it as ``digest_v1``."""

from __future__ import annotations

import json
from typing import Any

from django.db import migrations

from harness import canonical
from harness.snapshot import SNAPSHOT_VERSION, snapshot_digest


def to_row_digests(apps: Any, schema_editor: Any) -> None:
    Snapshot = apps.get_model("runs", "Snapshot")
    for snapshot in Snapshot.objects.all().iterator():
        body = json.loads(snapshot.content)
        if body.get("snapshot_version") != 1:
            continue
        body["snapshot_version"] = SNAPSHOT_VERSION
        body["digest_v1"] = snapshot.content_digest
        Snapshot.objects.filter(pk=snapshot.pk).update(
            content=canonical.line(body), content_digest=snapshot_digest(body)
        )


class Migration(migrations.Migration):
    dependencies = [("runs", "0019_board_changes")]

    operations = [migrations.RunPython(to_row_digests, migrations.RunPython.noop)]
