"""A strict Content-Security-Policy on the catalog's pages: no inline script, nothing framed."""

from __future__ import annotations

# Scripts and styles only from our own static files; images only ours or data: (badges), never
# remote: a remote image in a SKILL.md would report to its author who viewed the skill (the
# renderer shows it as a link instead); no plugins, no framing, forms post only here.
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


class ContentSecurityPolicy:
    def __init__(self, get_response):  # noqa: ANN001
        self.get_response = get_response

    def __call__(self, request):  # noqa: ANN001, ANN204
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", POLICY)
        return response


class RegistryErrorPages:
    """The registry's service errors on catalog pages: its 404 is the page's 404 (a private
    skill reads exactly like a missing one), a refusal is a 403 page."""

    def __init__(self, get_response):  # noqa: ANN001
        self.get_response = get_response

    def __call__(self, request):  # noqa: ANN001, ANN204
        return self.get_response(request)

    def process_exception(self, request, exception):  # noqa: ANN001, ANN201
        from django.core.exceptions import PermissionDenied
        from django.http import Http404

        from registry.errors import Forbidden, NotFound, Unauthenticated

        if request.path.startswith(("/api/", "/.well-known/", "/admin/")):
            return None
        if isinstance(exception, NotFound):
            raise Http404(exception.message)
        if isinstance(exception, (Forbidden, Unauthenticated)):
            raise PermissionDenied(exception.message)
        return None
