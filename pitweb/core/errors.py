"""Every API error is ``{"error": {"code": ..., "message": ...}}`` with a stable code."""

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
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


_CODES: dict[type[Exception], str] = {
    Http404: "not_found",
    DjangoPermissionDenied: "permission_denied",
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


def validation_message(detail: Any) -> str:
    """A serializer's errors in one line: ``field: what is wrong; ...``."""
    if isinstance(detail, dict):
        return "; ".join(
            f"{k}: {' '.join(map(str, v if isinstance(v, list) else [v]))}"
            for k, v in detail.items()
        )
    return " ".join(map(str, detail)) if isinstance(detail, list) else str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, SubmissionError):
        return Response(error_body(exc.code, exc.message), status=exc.http_status)
    response = drf_handler(exc, context)
    if response is None:
        return None
    code = next((c for kind, c in _CODES.items() if isinstance(exc, kind)), "error")
    detail = response.data
    if isinstance(exc, exceptions.ValidationError):
        message = validation_message(detail)
    else:
        message = str(detail.get("detail", detail)) if isinstance(detail, dict) else str(detail)
    response.data = error_body(code, message)
    return response


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception | None = None) -> Any:
    """404: the JSON envelope under /api/, the plain page elsewhere."""
    from django.views import defaults

    if _is_api(request):
        return JsonResponse(error_body("not_found", "no such resource"), status=404)
    return defaults.page_not_found(request, exception or Http404())


def server_error(request: HttpRequest) -> Any:
    """500: the JSON envelope under /api/ (the traceback goes to the log, never here)."""
    from django.views import defaults

    if _is_api(request):
        return JsonResponse(
            error_body("server_error", "the server failed; the error is logged"), status=500
        )
    return defaults.server_error(request)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> Any:
    from django.views import defaults

    if _is_api(request):
        return JsonResponse(error_body("bad_request", "the request could not be read"), status=400)
    return defaults.bad_request(request, exception or ValueError("bad request"))


def bad_request_page(request: HttpRequest, message: str) -> HttpResponse:
    """A page's 400, as the site's other page errors: the 400 page saying what was wrong."""
    from django.shortcuts import render

    return render(request, "400.html", {"message": f"Bad request: {message}."}, status=400)
