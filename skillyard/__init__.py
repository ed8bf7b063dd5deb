"""The Django project of the Skillyard registry (settings, URLs, WSGI/ASGI)."""
