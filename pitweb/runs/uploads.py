"""Uploads stop at their limit while they stream in.

Every uploaded file is streamed to a private temporary file; the moment a file passes
the limit of its field, or the request announces more bytes than any upload may have,
the upload stops, the partial file is deleted and the request is refused (413). A
refused upload therefore writes at most its limit to disk.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import TemporaryFileUploadHandler

from pitweb.runs.errors import SubmissionError


def field_limit(field_name: str) -> int:
    if field_name in ("trajectory", "prices"):
        return int(settings.PITWEB_MAX_TRAJECTORY_BYTES)
    if field_name == "config":
        return int(settings.PITWEB_MAX_CONFIG_BYTES)
    return int(settings.PITWEB_MAX_RECEIPT_BYTES)  # the receipt, anything else


def request_limit() -> int:
    """The most any upload may send: every field at its limit, plus the form's framing."""
    return (
        2 * int(settings.PITWEB_MAX_RECEIPT_BYTES)
        + 2 * int(settings.PITWEB_MAX_TRAJECTORY_BYTES)
        + 64 * 1024
    )


class LimitedUploadHandler(TemporaryFileUploadHandler):
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

    def new_file(self, field_name: str, *args: Any, **kwargs: Any) -> None:
        super().new_file(field_name, *args, **kwargs)
        self._limit = field_limit(field_name)
        self._seen = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self._seen += len(raw_data)
        if self._seen > self._limit:
            self.upload_interrupted()  # the partial file is closed and deleted
            raise SubmissionError(
                "too_large", f"{self.field_name} is larger than {self._limit} bytes", 413
            )
        return super().receive_data_chunk(raw_data, start)
