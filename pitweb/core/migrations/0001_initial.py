"""The audit log moves here from the runs app and keeps its table
(``runs_auditevent``): the model is created in the migration state only, no row moves."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _content_type_moves(apps, schema_editor):
    """The admin's permissions and log entries follow the model to its new app."""
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="runs", model="auditevent").update(app_label="core")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("runs", "0012_platform_score_heartbeat"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AuditEvent",
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
                        ("action", models.CharField(max_length=40)),
                        ("reason", models.TextField()),
                        ("public", models.BooleanField(default=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "actor",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="audit_events",
                                to="runs.run",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "runs_auditevent",
                        "ordering": ["-created_at", "-id"],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(_content_type_moves, migrations.RunPython.noop),
    ]
