from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("points", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="verdict",
            name="judge_model",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="verdict",
            name="judge_model_returned",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="verdict",
            name="judged_at",
            field=models.TextField(blank=True),
        ),
    ]
