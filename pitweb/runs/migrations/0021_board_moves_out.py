"""The board's models move to the board app and keep their tables (``runs_<name>``):
deleted here from the migration state only, no table or row touched."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0020_snapshot_row_digests"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name="BoardChange",
                ),
                migrations.RemoveField(
                    model_name="boardentry",
                    name="board",
                ),
                migrations.RemoveField(
                    model_name="boardentry",
                    name="run",
                ),
                migrations.DeleteModel(
                    name="BoardVersion",
                ),
                migrations.RemoveField(
                    model_name="snapshot",
                    name="published_by",
                ),
                migrations.DeleteModel(
                    name="StoredBoard",
                ),
                migrations.DeleteModel(
                    name="BoardEntry",
                ),
                migrations.DeleteModel(
                    name="Snapshot",
                ),
            ],
            database_operations=[],
        ),
    ]
