"""The ASGI entry point (`make run` serves it with uvicorn, and scripts/web.sh with
SKILLYARD_WEB_SERVER=uvicorn): Django behind the body guard, which bounds slow, large and
unauthenticated request bodies (skillyard/body_guard.py)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "skillyard.settings")
django_application = get_asgi_application()

from skillyard.body_guard import BodyGuard  # noqa: E402 (needs the settings configured above)

application = BodyGuard(django_application)

from worker.dispatch import start_rescans  # noqa: E402

# Embedded default (no broker): versions the scanner judged with older rules are re-scanned in
# the background, a batch at a time (DESIGN §13); with a broker the workers' beat does it.
start_rescans()
