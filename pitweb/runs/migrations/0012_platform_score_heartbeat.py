"""Platform scores run on the claimable-job machine and heart-beat like verification
jobs: a score being worked on now counts as having beaten when it started, so the
sweep's first look gives its worker the same grace as a fresh claim."""

from typing import Any

from django.db import migrations, models
from django.db.models import F


def beat_at_start(apps: Any, schema_editor: Any) -> None:
    score = apps.get_model("runs", "PlatformScore")
    score.objects.filter(state="scoring").update(heartbeat_at=F("started_at"))


class Migration(migrations.Migration):
    dependencies = [("runs", "0011_run_forms_text")]

    operations = [
        migrations.AddField(
            model_name="platformscore",
            name="heartbeat_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(beat_at_start, migrations.RunPython.noop),
    ]
