"""Cell records move out of their rows into storage, named by their digest; each row keeps
the digest. Records already in rows are stored first (and read back into them if the
migration is reversed), so nothing is lost."""

from __future__ import annotations

import hashlib
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import migrations, models


def _store_records(apps: Any, schema_editor: Any) -> None:
    cells = apps.get_model("execution", "ExecutionCell")
    for cell in cells.objects.exclude(record="").iterator():
        data = cell.record.encode("utf-8")
        hexdigest = hashlib.sha256(data).hexdigest()
        name = f"cells/{hexdigest}.json"
        if not default_storage.exists(name):
            default_storage.save(name, ContentFile(data))
        cells.objects.filter(pk=cell.pk).update(record_sha256=f"sha256:{hexdigest}")


def _load_records(apps: Any, schema_editor: Any) -> None:
    cells = apps.get_model("execution", "ExecutionCell")
    for cell in cells.objects.exclude(record_sha256="").iterator():
        name = f"cells/{cell.record_sha256.removeprefix('sha256:')}.json"
        with default_storage.open(name, "rb") as stored:
            record = stored.read().decode("utf-8")
        cells.objects.filter(pk=cell.pk).update(record=record)


class Migration(migrations.Migration):
    dependencies = [("execution", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="executioncell",
            name="record_sha256",
            field=models.CharField(blank=True, max_length=71),
        ),
        migrations.RunPython(_store_records, _load_records),
        migrations.RemoveField(model_name="executioncell", name="record"),
    ]
