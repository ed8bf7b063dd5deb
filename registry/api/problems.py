"""RFC 9457 problem details for every error the API answers, with stable codes.

``{"type", "title", "status", "detail", "code", "instance", "errors": [{code, message, path}]}``,
plus ``suggestions`` (the nearest visible names) when a skill name was not found,
served as ``application/problem+json`` — for service errors, DRF errors (400/401/403/404/405/
413/415/429) and Django's own 404/500 under ``/api/`` and ``/.well-known/``.
"""

from __future__ import annotations

from http import HTTPStatus

from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.views import defaults
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from registry.errors import RegistryError, Unauthenticated

CONTENT_TYPE = "application/problem+json"
API_PREFIXES = ("/api/", "/.well-known/")
_DRF_CODES = {
    exceptions.NotAuthenticated: "auth.required",
    exceptions.PermissionDenied: "permission.denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method.not_allowed",
    exceptions.NotAcceptable: "request.not_acceptable",
    exceptions.UnsupportedMediaType: "request.unsupported_media_type",
    exceptions.Throttled: "throttled",
    exceptions.ParseError: "request.malformed",
    exceptions.ValidationError: "request.invalid",
}


def problem(status: int, code: str, detail: str, *, instance: str = "", errors: list | None = None) -> dict:
    return {
        "type": f"urn:skillyard:problem:{code}",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "code": code,
        "instance": instance,
        "errors": errors or [],
    }


def exception_handler(exc, context):
    request = context["request"]
    if isinstance(exc, RegistryError):
        body = problem(exc.status, exc.code, exc.message, instance=request.path, errors=exc.errors)
        if exc.code == "skill.not_found" and context.get("kwargs", {}).get("name"):
            body["suggestions"] = _suggestions(request, context["kwargs"]["name"])
        response = Response(body, status=exc.status, content_type=CONTENT_TYPE)
        if isinstance(exc, Unauthenticated):
            response["WWW-Authenticate"] = 'Bearer realm="skillyard"'
        return response
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # an unexpected error: Django's handler500 below answers
    code, detail, errors = _describe(exc)
    response.data = problem(response.status_code, code, detail, instance=request.path, errors=errors)
    response.content_type = CONTENT_TYPE
    return response


def _suggestions(request, name: str) -> list[str]:
    """ "Did you mean": the visible names nearest a skill name that was not found (an extra
    member of the problem document, RFC 9457 section 3.2)."""
    from registry.api.authentication import request_actor
    from registry.selectors import skill_name_suggestions

    return skill_name_suggestions(actor=request_actor(request), name=str(name))


def _describe(exc: exceptions.APIException) -> tuple[str, str, list]:
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
    if isinstance(exc, exceptions.AuthenticationFailed):
        return str(exc.get_codes()), str(exc.detail), []
    if isinstance(exc, exceptions.ValidationError):
        return code, "The request is not valid.", _field_errors(exc.detail)
    return code, str(exc.detail), []


def _field_errors(detail, path: str = "") -> list[dict]:
    if isinstance(detail, dict):
        return [e for key, value in detail.items() for e in _field_errors(value, f"{path}.{key}" if path else key)]
    if isinstance(detail, list):
        return [e for item in detail for e in _field_errors(item, path)]
    return [{"code": f"field.{getattr(detail, 'code', 'invalid')}", "message": str(detail), "path": path}]


def _json_problem(request, status: int, code: str, detail: str) -> JsonResponse:
    body = problem(status, code, detail, instance=request.path)
    return JsonResponse(body, status=status, content_type=CONTENT_TYPE)


def _is_api(request) -> bool:
    return request.path.startswith(API_PREFIXES)


def handler404(request, exception=None):
    if _is_api(request):
        return _json_problem(request, 404, "not_found", "Nothing here.")
    return defaults.page_not_found(request, exception)


def handler500(request):
    if _is_api(request):
        return _json_problem(request, 500, "server.error", "The server failed; the error was logged.")
    return defaults.server_error(request)


def handler400(request, exception=None):
    if _is_api(request):
        return _json_problem(request, 400, "request.bad", "Bad request.")
    return defaults.bad_request(request, exception)


def handler403(request, exception=None):
    if _is_api(request):
        return _json_problem(request, 403, "permission.denied", "Forbidden.")
    return defaults.permission_denied(request, exception)
