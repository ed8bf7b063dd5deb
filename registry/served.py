"""How a skill's bytes leave the registry: never as active content of the registry's origin.

A skill is written by anyone who can publish. Served with its real type from our own origin, a
skill's ``preview.html`` or ``.svg`` would be a page of this site: its script (the CSP allows
``'self'``, and the skill's own ``.js`` *is* ``'self'``) could read a signed-in user's pages and
create a token in their name. So every response carrying a skill's files (one file, an archive)
gets the same treatment here:

- text is ``text/plain; charset=utf-8``, anything else ``application/octet-stream`` as an
  attachment: no browser renders either as a document or runs it as script;
- ``X-Content-Type-Options: nosniff``: the browser may not guess a more active type;
- ``Content-Security-Policy: sandbox; default-src 'none'``: even opened directly, the response
  is a unique opaque origin that may load and run nothing.

Installers (``skillctl``, ``npx skills add``) read bytes and ignore all three.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.utils.http import content_disposition_header

# The CSP of every response that carries skill bytes (the catalog's own pages keep theirs).
INERT_POLICY = "sandbox; default-src 'none'"
TEXT = "text/plain; charset=utf-8"
BINARY = "application/octet-stream"
SNIFF_BYTES = 8192  # a NUL in the first 8 KiB marks binary, as git and the catalog's file view judge


def make_inert(response: HttpResponseBase) -> HttpResponseBase:
    """The headers that keep a response carrying skill bytes from running in a browser."""
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = INERT_POLICY
    return response


def is_text(data: bytes) -> bool:
    if b"\0" in data[:SNIFF_BYTES]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def skill_file_response(data: bytes, path: str) -> HttpResponse:
    """One file of a skill: plain text when it is UTF-8 text, else an attachment."""
    if is_text(data):
        response = HttpResponse(data, content_type=TEXT)
    else:
        response = HttpResponse(data, content_type=BINARY)
        response["Content-Disposition"] = content_disposition_header(True, path.rsplit("/", 1)[-1])
    make_inert(response)
    return response
