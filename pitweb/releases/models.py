from django.db import models


class Release(models.Model):
    """A frozen release the server holds, identified by its content digest."""

    content_digest = models.CharField(max_length=71, unique=True)
    name = models.CharField(max_length=200)
    manifest = models.JSONField()
    window_start = models.DateField()
    window_end = models.DateField()
    row_count = models.PositiveIntegerField()
    storage_prefix = models.CharField(max_length=200)
    registered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-window_end", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def digest_hex(self) -> str:
        return self.content_digest.removeprefix("sha256:")
