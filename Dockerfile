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
COPY requirements/base.txt requirements/ldap.txt /tmp/
RUN uv pip install --no-cache --python /opt/venv/bin/python -r /tmp/base.txt
# LDAP sign-in: python-ldap is built against libldap and libsasl2, whose run-time libraries stay.
# Python's headers come with python:3.11-slim; Debian's own python3 needs python3-dev for them.
RUN build="gcc libc6-dev libldap2-dev libsasl2-dev" \
    && include=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])') \
    && { [ -e "$include/Python.h" ] || build="$build python3-dev"; } \
    && apt-get update \
    && apt-get install -y --no-install-recommends $build \
    && uv pip install --no-cache --python /opt/venv/bin/python -r /tmp/ldap.txt \
    && apt-mark manual 'libldap-2.5-0' 'libsasl2-2' \
    && apt-get purge -y --auto-remove $build \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --system --home /app --uid 1000 vigil
WORKDIR /app
COPY --chown=vigil:vigil . /app
# collectstatic needs a SECRET_KEY and hosts to import the production settings; these are not used at run time.
RUN SECRET_KEY=build-only-not-used-at-run-time-000000 ALLOWED_HOSTS=localhost python manage.py collectstatic --noinput -v 0
USER vigil

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s CMD python -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)" || exit 1
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4", "--access-logfile", "-"]
