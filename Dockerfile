# The registry image: web (scripts/web.sh: gunicorn's threads, behind nginx), worker and beat (celery) run from it; see
# docker-compose.yaml. FROM the local base (scripts/compose-image.sh): nothing is pulled. Python is
# Debian's; the server's packages go into a venv with pip.
FROM skillyard/base:bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/venv/bin:$PATH \
    SKILLYARD_DATA_DIR=/data SKILLYARD_STATIC_ROOT=/app/static
WORKDIR /app

# The dependencies in a layer of their own, read from pyproject.toml: a change to the code does not
# download them again.
COPY pyproject.toml ./
RUN python3 -m venv /opt/venv \
 && python3 -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + p['optional-dependencies']['server']))" >/tmp/requirements.txt \
 && pip install --no-cache-dir --quiet -r /tmp/requirements.txt \
 && rm /tmp/requirements.txt

COPY README.md LICENSE manage.py ./
COPY client ./client
COPY skillyard ./skillyard
COPY registry ./registry
COPY catalog ./catalog
COPY worker ./worker
COPY templates ./templates
COPY scripts/web.sh ./scripts/web.sh
RUN pip install --no-cache-dir --quiet --no-deps . \
 && python manage.py collectstatic --noinput -v0 \
 && useradd --system --uid 10001 --home-dir /data skillyard && mkdir -p /data && chown skillyard /data \
 && rm -rf build *.egg-info

USER skillyard
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/v1/skills', timeout=2)"
# The web server's command is scripts/web.sh's (the soak runs the same); port 8000 on every interface.
CMD ["sh", "-c", "python manage.py migrate --noinput && python manage.py sweep_uploads -v0 && SKILLYARD_WEB_PORT=8000 exec sh scripts/web.sh"]
