"""The reasoning audit of a run (``runs.ReasoningAudit``): its digest, its stored artifact
and its counts, re-derived by the worker when it verifies the run."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0023_holdouts_and_forward_tested"),
    ]

    operations = [
        migrations.CreateModel(
            name="ReasoningAudit",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("audit_version", models.PositiveIntegerField()),
                ("digest", models.CharField(max_length=71)),
                ("artifact_sha256", models.CharField(max_length=71)),
                ("artifact_name", models.CharField(max_length=200)),
                ("texts", models.PositiveIntegerField()),
                ("date_hits", models.PositiveIntegerField()),
                ("issuer_hits", models.PositiveIntegerField()),
                ("cells", models.JSONField(default=list)),
                ("not_scanned", models.TextField()),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "run",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="reasoning_audit",
                        to="runs.run",
                    ),
                ),
            ],
        ),
    ]
