# Vigil's production image: gunicorn for the web, the same image for the Celery worker and beat.
# Any Debian bookworm image with Python 3.11 as python3 and its venv module will do as the base
# (the compose test builds on Debian's own python3.11: tests/services/podman.py).
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production \
    PATH=/opt/venv/bin:$PATH

RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install --no-cache-dir uv==0.13.9
COPY requirements/base.txt /tmp/requirements.txt
RUN uv pip install --no-cache --python /opt/venv/bin/python -r /tmp/requirements.txt

RUN useradd --system --home /app --uid 1000 vigil
WORKDIR /app
COPY --chown=vigil:vigil . /app
# collectstatic needs a SECRET_KEY and hosts to import the production settings; these are not used at run time.
RUN SECRET_KEY=build-only-not-used-at-run-time-000000 ALLOWED_HOSTS=localhost python manage.py collectstatic --noinput -v 0
USER vigil

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s CMD python -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)" || exit 1
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4", "--access-logfile", "-"]
