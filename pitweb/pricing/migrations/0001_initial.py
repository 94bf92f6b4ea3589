"""Platform scores move here from the runs app and keep their table
(``runs_platformscore``): the model is created in the migration state only, no row moves."""

import django.db.models.deletion
from django.db import migrations, models


def _content_type_moves(apps, schema_editor):
    """The admin's permissions and log entries follow the model to its new app."""
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="runs", model="platformscore").update(app_label="pricing")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("releases", "0003_release_name_text"),
        ("runs", "0012_platform_score_heartbeat"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="PlatformScore",
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
                        ("attempts", models.PositiveIntegerField(default=0)),
                        ("worker", models.CharField(blank=True, max_length=200)),
                        ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                        ("message", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "state",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("scoring", "Scoring"),
                                    ("scored", "Scored"),
                                    ("refused", "Refused"),
                                    ("harness_error", "Harness Error"),
                                ],
                                default="pending",
                                max_length=16,
                            ),
                        ),
                        ("figures", models.JSONField(blank=True, null=True)),
                        ("shifted_pit", models.FloatField(blank=True, null=True)),
                        ("shifted_pit_low", models.FloatField(blank=True, null=True)),
                        ("shifted_pit_high", models.FloatField(blank=True, null=True)),
                        ("shifted_pit_priced", models.PositiveIntegerField(blank=True, null=True)),
                        ("main_pit", models.FloatField(blank=True, null=True)),
                        ("main_pit_low", models.FloatField(blank=True, null=True)),
                        ("main_pit_high", models.FloatField(blank=True, null=True)),
                        ("delta_shifted_pit", models.FloatField(blank=True, null=True)),
                        ("delta_redacted_pit", models.FloatField(blank=True, null=True)),
                        (
                            "prices",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="scores",
                                to="releases.referenceprices",
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="platform_scores",
                                to="runs.run",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "runs_platformscore",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [
                            models.Index(
                                models.OrderBy(models.F("shifted_pit"), descending=True),
                                condition=models.Q(
                                    ("shifted_pit__isnull", False), ("state", "scored")
                                ),
                                name="platform_ranked_idx",
                            )
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("run", "prices"), name="one_score_per_version"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(_content_type_moves, migrations.RunPython.noop),
    ]
