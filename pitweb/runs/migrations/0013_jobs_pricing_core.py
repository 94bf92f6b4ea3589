"""Platform scores move to the pricing app and the audit log to core, each keeping its
table (state only, no row moves); ``Cell`` and ``ProbeItem``, which the site wrote at
upload and never read (every page reads the cells and probe items off the stored
receipt body), are dropped; a run's status gets its choices (the verification states
it always held)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0012_platform_score_heartbeat"),
        ("pricing", "0001_initial"),
        ("core", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="run",
                    name="platform",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="pricing.platformscore",
                    ),
                ),
                migrations.DeleteModel(name="PlatformScore"),
                migrations.DeleteModel(name="AuditEvent"),
            ],
            database_operations=[],
        ),
        migrations.DeleteModel(name="Cell"),
        migrations.DeleteModel(name="ProbeItem"),
        migrations.AlterField(
            model_name="run",
            name="status",
            field=models.CharField(
                choices=[
                    ("received", "Received"),
                    ("verifying", "Verifying"),
                    ("verified", "Verified"),
                    ("mismatch", "Mismatch"),
                    ("harness_error", "Harness Error"),
                    ("unknown_release", "Unknown Release"),
                ],
                default="received",
                max_length=16,
            ),
        ),
    ]
