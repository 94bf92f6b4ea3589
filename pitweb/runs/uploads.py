"""Uploads are refused while they stream in, before their bytes are kept.

Every uploaded file is streamed to a private temporary file; the moment a file passes
the limit of its field, or the request announces more bytes than any upload may have,
the upload stops, the partial file is deleted and the request is refused (413). A file
part the endpoint does not take, or one it already has, is refused at its part header,
before a byte of its body is read (400 ``unknown_field``, ``duplicate_field``). A refused
upload therefore writes at most its limit to disk, and nothing for a field it did not
want. Text parts never touch the disk: Django holds them in memory, all of them together
at most DATA_UPLOAD_MAX_MEMORY_SIZE, and the endpoint refuses unknown ones after parsing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile, UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, TemporaryFileUploadHandler

from pitweb.artifacts import job_file, scratch_sweep
from pitweb.core.errors import SubmissionError


@dataclass(frozen=True)
class Form:
    files: tuple[str, ...]
    data: tuple[str, ...] = ()


# The multipart fields each upload endpoint takes, by URL name. A request to any other
# URL is held to the size limits only.
FORMS = {
    "api-runs": Form(files=("receipt", "trajectory", "config", "prices")),
    "api-reference-prices": Form(
        files=("prices", "index"),
        data=("source", "pulled_at", "reason", "index_symbol", "index_source", "index_pulled_at"),
    ),
    "api-answer-sets": Form(files=("answers",)),
    "points-models": Form(files=()),
    "point-set-upload": Form(
        files=("archive",),
        data=("csrfmiddlewaretoken", "name", "title", "state", "reveal_on", "source"),
    ),
}


def field_limit(field_name: str) -> int:
    if field_name in ("trajectory", "prices", "answers"):
        return int(settings.PITWEB_MAX_TRAJECTORY_BYTES)
    if field_name == "config":
        return int(settings.PITWEB_MAX_CONFIG_BYTES)
    if field_name == "archive":
        return int(settings.PITWEB_MAX_POINTSET_BYTES)
    return int(settings.PITWEB_MAX_RECEIPT_BYTES)  # the receipt, anything else


def request_limit() -> int:
    """The most any upload may send: every field at its limit, plus the form's framing."""
    return (
        2 * int(settings.PITWEB_MAX_RECEIPT_BYTES)
        + 2 * int(settings.PITWEB_MAX_TRAJECTORY_BYTES)
        + 64 * 1024
    )


class SpooledUpload(TemporaryUploadedFile):
    """Django's temporary upload, in the scratch root and named by its owner (so the
    file of a web worker killed mid-upload is swept), deleted when closed."""

    def __init__(
        self,
        name: str,
        content_type: str,
        size: int,
        charset: str | None,
        content_type_extra: dict[str, Any] | None = None,
        *,
        field_name: str,
    ) -> None:
        UploadedFile.__init__(
            self, job_file("upload", field_name), name, content_type, size, charset,
            content_type_extra,
        )  # fmt: skip


class LimitedUploadHandler(TemporaryFileUploadHandler):
    _form: Form | None = None  # the endpoint's fields; None: any (only sizes are held)

    def handle_raw_input(
        self,
        input_data: Any,
        META: dict[str, Any],
        content_length: int,
        boundary: Any,
        encoding: str | None = None,
    ) -> None:
        if content_length > request_limit():
            raise SubmissionError(
                "too_large", f"the request is larger than {request_limit()} bytes", 413
            )
        match = getattr(self.request, "resolver_match", None)
        self._form = FORMS.get(match.url_name) if match is not None else None
        self._files_seen: set[str] = set()
        scratch_sweep()  # what uploads of killed web workers left behind

    def new_file(self, field_name: str, *args: Any, **kwargs: Any) -> None:
        self._refuse_unexpected(field_name)
        FileUploadHandler.new_file(self, field_name, *args, **kwargs)
        self.file = SpooledUpload(
            self.file_name or "upload", self.content_type or "", 0, self.charset,
            self.content_type_extra, field_name=field_name,
        )  # fmt: skip
        self._limit = field_limit(field_name)
        self._seen = 0

    def _refuse_unexpected(self, field_name: str) -> None:
        """At the part's header: nothing of its body has been read."""
        form = self._form
        if form is None:
            return
        if field_name in form.data:
            raise SubmissionError(
                "unknown_field", f"{field_name} is a text field of this endpoint, not a file"
            )
        if field_name not in form.files:
            raise SubmissionError(
                "unknown_field",
                f"unknown multipart field(s): {field_name[:200]}; "
                f"this endpoint takes {', '.join((*form.files, *form.data))}",
            )
        if field_name in self._files_seen:
            raise SubmissionError("duplicate_field", f"field(s) sent more than once: {field_name}")
        self._files_seen.add(field_name)

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self._seen += len(raw_data)
        if self._seen > self._limit:
            self.upload_interrupted()  # the partial file is closed and deleted
            raise SubmissionError(
                "too_large", f"{self.field_name} is larger than {self._limit} bytes", 413
            )
        return super().receive_data_chunk(raw_data, start)
