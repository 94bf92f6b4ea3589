"""Holdouts and the forward-tested mark: each run's agent digest, declared training cutoff
and where its window lies against it (the receipt's P2 check), read off the stored body;
and whether the site executed it with an agent package a forward run proved forward.

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
    Commitment = apps.get_model("forward", "Commitment")
    for run in Run.objects.only("pk", "body").order_by("pk").iterator(chunk_size=500):
        found = facts(run.body)
        if any(found.values()):
            Run.objects.filter(pk=run.pk).update(**found)
    proven = (
        Commitment.objects.filter(runs__kind="forward", runs__status="forward")
        .values_list("agent_digest", flat=True)
        .distinct()
    )
    digests = [d for d in proven if d]
    if digests:
        Run.objects.filter(executed=True, agent_digest__in=digests).update(forward_tested=True)


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
