"""The Celery app. Without ``SKILLYARD_BROKER_URL`` tasks run in-process (eager), so one machine
needs no worker; with Redis as broker, ``celery -A worker worker`` runs them anywhere.

Jobs (scan, routing manifest, skill test runs; DESIGN §9) arrive with a later issue; each will be
a thin task in worker/tasks.py that loads by id and calls a service.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "skillyard.settings")

app = Celery("skillyard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["worker"])
