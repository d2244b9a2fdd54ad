"""bench/load.sh's WSGI application: Vigil's, plus ``/__bench__/stack/``.

That view answers "ok" through every middleware (host check, HTTPS, sessions, CSRF, login
required, time zone, audit, htmx, CSP, axes) and reads nothing: no session cookie is sent and
it needs no login. It is the floor of a request through the whole stack, which ``/healthz`` no
longer is: the first middleware answers it (``HealthzMiddleware``), so that container probes by
address pass ``ALLOWED_HOSTS``.

With ``LOAD_CPU_DIR`` set, each worker adds up the CPU time (``time.thread_time``: the
thread's own, so gthread workers' threads do not count each other's) of its ``/api/`` requests by
target (``X-Bench-Target``, bench/load.lua) and part: the API key (authentication), the role
(permissions), the rate limits (throttles), the view (the rest of DRF's dispatch) and everything
around it (middleware, rendering, WSGI), with how many the fast path answered, and writes the
sums to ``<LOAD_CPU_DIR>/<pid>.json`` every 50 requests; bench/load.sh prints their split. Warm-up
requests (``X-Bench-Warmup``, bench/load.sh's first seconds of each target) are not counted: a
worker's first requests pay its one-time costs (its database connection, lazy imports), which
landed in "API key" when only a few hundred requests were measured.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

from django.conf import settings  # noqa: E402
from django.contrib.auth.decorators import login_not_required  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpRequest, HttpResponse  # noqa: E402
from django.urls import include, path  # noqa: E402

application = get_wsgi_application()

CPU_DIR = os.environ.get("LOAD_CPU_DIR", "")
PARTS = ("requests", "total", "key", "role", "rate limits", "dispatch", "fast", "fast key")
PARTS += ("fast rate limits", "answered")
_cpu: dict[str, dict[str, float]] = {}  # by target (X-Bench-Target): part -> sum
_lock = threading.Lock()  # gthread workers: threads add to the same sums
_here = threading.local()  # .sums: those of the API request this thread answers, or None


def _timed(part: str, method):  # noqa: ANN001, ANN202
    def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        sums = getattr(_here, "sums", None)
        if sums is None:
            return method(*args, **kwargs)
        start = time.thread_time()
        try:
            result = method(*args, **kwargs)
        finally:
            sums[part] += time.thread_time() - start
        if part == "fast" and result is not None:
            sums["answered"] += 1
        return result

    return timed


def _flush() -> None:
    path = Path(CPU_DIR) / f"{os.getpid()}.json"
    path.with_suffix(".tmp").write_text(json.dumps(_cpu))
    path.with_suffix(".tmp").replace(path)


if CPU_DIR:
    from rest_framework.views import APIView

    APIView.perform_authentication = _timed("key", APIView.perform_authentication)
    APIView.check_permissions = _timed("role", APIView.check_permissions)
    APIView.check_throttles = _timed("rate limits", APIView.check_throttles)
    APIView.dispatch = _timed("dispatch", APIView.dispatch)
    # The fast path (apps/api/fastpath.py): its key, its round trip, and all of its answer.
    from apps.api import fastpath

    fastpath.kept_key = _timed("fast key", fastpath.kept_key)
    fastpath.count = _timed("fast rate limits", fastpath.count)
    fastpath.FastPath.answer = _timed("fast", fastpath.FastPath.answer)
    _vigil = application

    def application(environ, start_response):  # noqa: ANN001, ANN201, F811
        path = environ.get("PATH_INFO", "")
        if not path.startswith("/api/") or environ.get("HTTP_X_BENCH_WARMUP"):
            return _vigil(environ, start_response)
        with _lock:
            target = environ.get("HTTP_X_BENCH_TARGET", "?")
            sums = _cpu.setdefault(target, dict.fromkeys(PARTS, 0.0))
        _here.sums = dict.fromkeys(PARTS, 0.0)  # this request's, added to sums at its end
        start = time.thread_time()
        try:
            response = _vigil(environ, start_response)
            try:
                return [b"".join(response)]  # sent on here, inside the measure
            finally:
                response.close()  # request_finished, as gunicorn would send it
        finally:
            mine, _here.sums = _here.sums, None
            mine["total"] = time.thread_time() - start
            mine["requests"] = 1
            with _lock:
                for name, value in mine.items():
                    sums[name] += value
                if sums["requests"] % 50 == 1:
                    _flush()


@login_not_required
def stack(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [path("__bench__/stack/", stack), path("", include("config.urls"))]
settings.ROOT_URLCONF = __name__
