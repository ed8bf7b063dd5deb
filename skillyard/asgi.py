"""The ASGI entry point (`make run` and the container serve it with uvicorn): Django behind the
body guard, which bounds slow, large and unauthenticated request bodies (skillyard/body_guard.py)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "skillyard.settings")
django_application = get_asgi_application()

from skillyard.body_guard import BodyGuard  # noqa: E402 (needs the settings configured above)

application = BodyGuard(django_application)
