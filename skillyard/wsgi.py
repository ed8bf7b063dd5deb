"""The WSGI entry point (scripts/web.sh serves it with gunicorn's threads in production): Django
behind the WSGI body guard, which bounds slow, large and unauthenticated request bodies
(skillyard/body_guard.py)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "skillyard.settings")
django_application = get_wsgi_application()

from skillyard.body_guard import WsgiBodyGuard  # noqa: E402 (needs the settings configured above)

application = WsgiBodyGuard(django_application)

from worker.dispatch import start_rescans  # noqa: E402

# Embedded default (no broker): versions the scanner judged with older rules are re-scanned in
# the background, a batch at a time (DESIGN §13), as skillyard/asgi.py does for uvicorn.
start_rescans()
