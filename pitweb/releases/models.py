from django.db import models


class Release(models.Model):
    """A frozen release the server holds, identified by its content digest."""

    content_digest = models.CharField(max_length=71, unique=True)
    name = models.TextField()  # the manifest's, which no format bounds
    manifest = models.JSONField()
    window_start = models.DateField()
    window_end = models.DateField()
    row_count = models.PositiveIntegerField()
    storage_prefix = models.CharField(max_length=200)
    registered_at = models.DateTimeField(auto_now_add=True)
    # the download of its files as one archive (``pitweb.releases.archive``): computed
    # once from the stored files, empty until then
    archive_size = models.BigIntegerField(null=True, blank=True)
    archive_sha256 = models.CharField(max_length=71, blank=True)
    # the version this one grew from (its manifest's ``parent``), registered before it;
    # a parent is never deleted from under its versions
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    version = models.PositiveIntegerField(default=1)  # 1 for a release no version grew from

    class Meta:
        ordering = ["-window_end", "name"]
        constraints = [
            # a line never forks: a version has at most one later version, so no two
            # versions can tell different stories about the same days
            models.UniqueConstraint(fields=["parent"], name="one_version_after_each")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def digest_hex(self) -> str:
        return self.content_digest.removeprefix("sha256:")


class ReferencePricesEdited(Exception):
    """A registered price version is never changed: register a new version instead."""


class ReferencePrices(models.Model):
    """A price file staff registered for a release: the one set of bars every run of the
    release is priced with for its platform figures. Versioned, never edited."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="reference_prices")
    version = models.PositiveIntegerField()
    source = models.CharField(max_length=500)
    pulled_at = models.CharField(max_length=100)
    file_sha256 = models.CharField(max_length=71)
    file_name = models.CharField(max_length=200)
    basis = models.CharField(max_length=16)  # open (opening auction) or close (close-only file)
    symbols = models.PositiveIntegerField()
    bars = models.PositiveIntegerField()
    # the latest day a bar is for: what a forward run's hold needs priced (null: registered
    # before it was recorded, so coverage is unknown)
    last_day = models.DateField(null=True, blank=True)
    # the market index every run of the release is measured against with these prices
    # (harness.market.index): one symbol of a price file, its statement and digest; blank:
    # none, and no run's platform figures hold market figures
    index_symbol = models.CharField(max_length=200, blank=True, default="")
    index_source = models.CharField(max_length=500, blank=True, default="")
    index_pulled_at = models.CharField(max_length=100, blank=True, default="")
    index_sha256 = models.CharField(max_length=71, blank=True, default="")
    index_name = models.CharField(max_length=200, blank=True, default="")
    index_levels = models.PositiveIntegerField(null=True, blank=True)
    registered_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.TextField()
    registered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["release", "-version"]
        verbose_name = verbose_name_plural = "reference prices"
        constraints = [
            models.UniqueConstraint(fields=["release", "version"], name="one_prices_version"),
            # the same prices with another index (or a first one) is a version of its own
            models.UniqueConstraint(
                fields=["release", "file_sha256", "index_sha256", "index_symbol"],
                name="one_prices_file_and_index",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.release.name} prices v{self.version}"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise ReferencePricesEdited(
                f"reference prices v{self.version} of {self.release_id} are registered; "
                "register a new version instead of editing this one"
            )
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    @property
    def label(self) -> str:
        return f"v{self.version}"

    def statement(self) -> dict[str, object]:
        """What every row, page and export says of these prices (and their index)."""
        return {
            "version": self.version,
            "source": self.source,
            "pulled_at": self.pulled_at,
            "file_sha256": self.file_sha256,
            "basis": self.basis,
            **({"index": self.index_statement()} if self.index_symbol else {}),
        }

    def index_statement(self) -> dict[str, object]:
        return {
            "symbol": self.index_symbol,
            "source": self.index_source,
            "pulled_at": self.index_pulled_at,
            "file_sha256": self.index_sha256,
            "levels": self.index_levels,
        }
