from django.db import migrations, models


def fill(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Runs whose last conclusive verification failed get that job's failed check."""
    Run = apps.get_model("runs", "Run")
    for run in Run.objects.filter(status="mismatch"):
        job = run.jobs.filter(state="mismatch").order_by("-finished_at", "-id").first()
        if job is not None:
            run.failed_check = job.mismatch_check[:200]
            run.save(update_fields=["failed_check"])


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0004_rank_on_verification_level"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="failed_check",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
