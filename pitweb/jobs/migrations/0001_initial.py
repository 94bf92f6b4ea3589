"""Worker beats move here from the runs app and keep their table (``runs_workerbeat``):
the model is created in the migration state only, no row moves."""

from django.db import migrations, models


def _content_type_moves(apps, schema_editor):
    """The admin's permissions and log entries follow the model to its new app."""
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="runs", model="workerbeat").update(app_label="jobs")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("runs", "0013_jobs_pricing_core"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="WorkerBeat",
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
                        ("name", models.CharField(max_length=200, unique=True)),
                        ("started_at", models.DateTimeField()),
                        ("last_seen", models.DateTimeField()),
                        ("stopped_at", models.DateTimeField(blank=True, null=True)),
                        ("isolation", models.BooleanField(default=False)),
                        ("isolation_unavailable", models.CharField(blank=True, max_length=500)),
                    ],
                    options={
                        "db_table": "runs_workerbeat",
                        "ordering": ["name"],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(_content_type_moves, migrations.RunPython.noop),
    ]
