# The registry image: web (uvicorn, behind nginx) and worker (celery) run from it; see docker-compose.yaml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    SKILLYARD_DATA_DIR=/data SKILLYARD_STATIC_ROOT=/app/static
WORKDIR /app

COPY pyproject.toml README.md* manage.py ./
COPY client ./client
COPY skillyard ./skillyard
COPY registry ./registry
COPY catalog ./catalog
COPY worker ./worker
COPY templates ./templates
RUN pip install --no-cache-dir '.[server]' \
 && python manage.py collectstatic --noinput -v0 \
 && useradd --system --uid 10001 skillyard && mkdir -p /data && chown skillyard /data

USER skillyard
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/v1/skills', timeout=2)"
CMD ["sh", "-c", "python manage.py migrate --noinput && python manage.py sweep_uploads -v0 && exec uvicorn skillyard.asgi:application --host 0.0.0.0 --port 8000 --workers ${SKILLYARD_WEB_WORKERS:-4} --no-proxy-headers --no-server-header --timeout-keep-alive 5"]
