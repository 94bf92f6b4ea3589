"""The board's models move here from the runs app and keep their tables
(``runs_<name>``): created in the migration state only, no table or row moves."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MODELS = ("boardversion", "boardchange", "snapshot", "storedboard", "boardentry")


def _content_types_move(apps, schema_editor):
    """The admin's permissions and log entries follow the models to their new app."""
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="runs", model__in=MODELS).update(app_label="board")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("runs", "0021_board_moves_out"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="BoardChange",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("version", models.BigIntegerField(db_index=True)),
                        ("run_pk", models.BigIntegerField(blank=True, null=True)),
                    ],
                    options={
                        "db_table": "runs_boardchange",
                    },
                ),
                migrations.CreateModel(
                    name="BoardVersion",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("version", models.BigIntegerField(default=0)),
                        ("changed_at", models.DateTimeField(blank=True, null=True)),
                        ("computed", models.BigIntegerField(default=0)),
                        ("epoch", models.BigIntegerField(default=0)),
                    ],
                    options={
                        "db_table": "runs_boardversion",
                    },
                ),
                migrations.CreateModel(
                    name="StoredBoard",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("key", models.CharField(max_length=64, unique=True)),
                        ("filters", models.JSONField()),
                        ("built_version", models.BigIntegerField(default=-1)),
                        ("built_at", models.DateTimeField(blank=True, null=True)),
                        ("min_trades", models.PositiveIntegerField(blank=True, null=True)),
                        ("building_since", models.DateTimeField(blank=True, null=True)),
                        ("requested_at", models.DateTimeField(blank=True, null=True)),
                        ("ranked_total", models.PositiveIntegerField(default=0)),
                        ("rank_base", models.BinaryField(blank=True, null=True)),
                        ("rank_delta", models.JSONField(default=list)),
                        ("apart", models.JSONField(default=dict)),
                        ("facets", models.JSONField(blank=True, null=True)),
                    ],
                    options={
                        "db_table": "runs_storedboard",
                    },
                ),
                migrations.CreateModel(
                    name="Snapshot",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("content", models.TextField()),
                        ("content_digest", models.CharField(max_length=71, unique=True)),
                        ("filters_key", models.CharField(db_index=True, max_length=600)),
                        ("taken_at", models.DateTimeField()),
                        ("board_version", models.BigIntegerField()),
                        ("reason", models.TextField()),
                        (
                            "published_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "runs_snapshot",
                        "ordering": ["-taken_at", "-id"],
                    },
                ),
                migrations.CreateModel(
                    name="BoardEntry",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("neg_return", models.FloatField()),
                        ("run_code", models.CharField(max_length=16)),
                        ("score", models.BigIntegerField()),
                        ("attempts", models.PositiveIntegerField()),
                        ("interval_low", models.FloatField()),
                        ("interval_high", models.FloatField()),
                        ("rank_low", models.PositiveIntegerField()),
                        ("rank_high", models.PositiveIntegerField()),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="runs.run",
                            ),
                        ),
                        (
                            "board",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="entries",
                                to="board.storedboard",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "runs_boardentry",
                        "indexes": [
                            models.Index(
                                fields=["board", "neg_return", "run_code", "run"],
                                name="board_entry_order_idx",
                            )
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("board", "run"), name="one_entry_per_board_and_run"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(_content_types_move, migrations.RunPython.noop),
    ]
