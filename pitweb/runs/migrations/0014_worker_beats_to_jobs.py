"""Worker beats move to the jobs app, which keeps their table: state only."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("runs", "0013_jobs_pricing_core"), ("jobs", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="WorkerBeat")],
            database_operations=[],
        ),
    ]
