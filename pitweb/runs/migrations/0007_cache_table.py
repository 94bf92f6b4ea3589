from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):  # type: ignore[no-untyped-def]
    """The database cache's table (throttles and cached boards are shared by every
    process through it when there is no Redis); nothing when the cache is Redis."""
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("runs", "0006_platform_scores")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
