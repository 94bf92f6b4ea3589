"""Every API error is ``{"error": {"code": ..., "message": ...}}`` with a stable code."""

from typing import Any

from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler


class SubmissionError(Exception):
    """A request we refuse, with a stable code and a message a person can act on."""

    def __init__(
        self, code: str, message: str, http_status: int = status.HTTP_400_BAD_REQUEST
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.http_status = http_status


_CODES = {
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.Throttled: "throttled",
    exceptions.ParseError: "parse_error",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.ValidationError: "invalid_input",
}


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, SubmissionError):
        return Response(error_body(exc.code, exc.message), status=exc.http_status)
    response = drf_handler(exc, context)
    if response is None:
        return None
    code = next((c for kind, c in _CODES.items() if isinstance(exc, kind)), "error")
    detail = response.data
    if isinstance(exc, exceptions.ValidationError):
        message = (
            "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in detail.items())
            if isinstance(detail, dict)
            else str(detail)
        )
    else:
        message = str(detail.get("detail", detail)) if isinstance(detail, dict) else str(detail)
    response.data = error_body(code, message)
    return response
