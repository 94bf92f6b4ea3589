"""Holdouts and the forward-tested mark: each run's agent digest, declared training cutoff
and where its window lies against it (the receipt's P2 check), read off the stored body;
and whether it is a forward run the engine settled as forward.

The stored runs are given the first three from their bodies, and ``forward_tested`` from
the forward rows already settled as forward. Written against the body as stored (plain
JSON), not the site's code, so the migration reads the same however that code changes."""

from typing import Any

from django.db import migrations, models

# the receipt's P2 check, as the relation the site stores (``runs.models.CUTOFF_CHECKS``)
CHECKS = {
    "window_starts_after_cutoff": "post_cutoff",
    "window_crosses_cutoff": "crossing",
    "window_ends_before_cutoff": "pre_cutoff",
}


def facts(body: Any) -> dict[str, str]:
    """(agent_digest, training_cutoff, cutoff_relation) of a stored body."""
    body = body if isinstance(body, dict) else {}
    config = body.get("config") or {}
    slot = (body.get("protocol") or {}).get("P2_training_cutoffs") or {}
    return {
        "agent_digest": str(config.get("agent_digest") or ""),
        "training_cutoff": str(config.get("training_cutoff") or ""),
        "cutoff_relation": CHECKS.get(slot.get("check") or "", ""),
    }


def backfill(apps: Any, schema_editor: Any) -> None:
    Run = apps.get_model("runs", "Run")
    for run in Run.objects.only("pk", "body").order_by("pk").iterator(chunk_size=500):
        found = facts(run.body)
        if any(found.values()):
            Run.objects.filter(pk=run.pk).update(**found)
    # forward-tested: the runs forward rows settled as forward (the site's execution of the
    # committed package), and no other
    ForwardRun = apps.get_model("forward", "ForwardRun")
    settled = ForwardRun.objects.filter(kind="forward", status="forward", run__executed=True)
    marked = [
        row.run_id
        for row in settled.select_related("run", "commitment")
        if row.run.agent_digest and row.run.agent_digest == row.commitment.agent_digest
    ]
    if marked:
        Run.objects.filter(pk__in=marked).update(forward_tested=True)


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0022_benchmarks"),
        ("forward", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="agent_digest",
            field=models.CharField(blank=True, db_index=True, max_length=71),
        ),
        migrations.AddField(
            model_name="run",
            name="training_cutoff",
            field=models.CharField(blank=True, max_length=10),
        ),
        migrations.AddField(
            model_name="run",
            name="cutoff_relation",
            field=models.CharField(
                blank=True,
                choices=[
                    ("", "not declared"),
                    ("post_cutoff", "post-cutoff"),
                    ("crossing", "crossing"),
                    ("pre_cutoff", "pre-cutoff"),
                ],
                default="",
                max_length=11,
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="forward_tested",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
