"""Boards are per benchmark now: the stored boards, keyed by the filters as they were
normalised before, are dropped (a stored board is a copy the worker computes again), and
each counts the runs it holds."""

from typing import Any

from django.db import migrations, models


def drop_stored_boards(apps: Any, schema_editor: Any) -> None:
    apps.get_model("board", "BoardEntry").objects.all().delete()
    apps.get_model("board", "StoredBoard").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("board", "0001_initial"),
        ("runs", "0022_benchmarks"),
    ]

    operations = [
        migrations.RunPython(drop_stored_boards, migrations.RunPython.noop),
        migrations.AddField(
            model_name="storedboard",
            name="runs_total",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
