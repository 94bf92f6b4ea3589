"""Snapshots are signed and chained: each names the board's snapshot before it and
carries the site's signature. The snapshots published before keep a blank signature and
no predecessor (their digests are unchanged); the constraints refuse a fork of a board's
chain."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("board", "0002_boards_per_benchmark"),
    ]

    operations = [
        migrations.AddField(
            model_name="snapshot",
            name="previous_digest",
            field=models.CharField(blank=True, max_length=71, null=True),
        ),
        migrations.AddField(
            model_name="snapshot",
            name="signature",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddConstraint(
            model_name="snapshot",
            constraint=models.UniqueConstraint(
                fields=("filters_key", "previous_digest"), name="snapshot_one_successor"
            ),
        ),
        migrations.AddConstraint(
            model_name="snapshot",
            constraint=models.UniqueConstraint(
                condition=models.Q(
                    ("previous_digest__isnull", True), models.Q(("signature", ""), _negated=True)
                ),
                fields=("filters_key",),
                name="snapshot_one_first_per_board",
            ),
        ),
    ]
