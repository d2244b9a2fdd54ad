"""bench/load.sh's WSGI application: Vigil's, plus ``/__bench__/stack/``.

That view answers "ok" through every middleware (host check, HTTPS, sessions, CSRF, login
required, time zone, audit, htmx, CSP, axes) and reads nothing: no session cookie is sent and
it needs no login. It is the floor of a request through the whole stack, which ``/healthz`` no
longer is: the first middleware answers it (``HealthzMiddleware``), so that container probes by
address pass ``ALLOWED_HOSTS``.

With ``LOAD_CPU_DIR`` set, each worker adds up the CPU time (``time.process_time``, one
request at a time in a sync worker) of its ``/api/`` requests by part: the API key
(authentication), the role (permissions), the rate limits (throttles), the view (the rest of
DRF's dispatch) and everything around it (middleware, rendering, WSGI), and writes the sums to
``<LOAD_CPU_DIR>/<pid>.json`` every 50 requests; bench/load.sh prints their split. Warm-up
requests (``X-Bench-Warmup``, bench/load.sh's first seconds of each target) are not counted: a
worker's first requests pay its one-time costs (its database connection, lazy imports), which
landed in "API key" when only a few hundred requests were measured.
"""

from __future__ import annotations

import json
import os
import sys
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
PARTS = ("key", "role", "rate limits", "view", "around")
_cpu = dict.fromkeys(("requests", "total", *PARTS), 0.0)
_in_api = False
_answered_in_warmup = 0  # the fast path's answers outside the measure


def _timed(part: str, method):  # noqa: ANN001, ANN202
    def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if not _in_api:
            return method(*args, **kwargs)
        start = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            _cpu[part] += time.process_time() - start

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
    _cpu.update(
        dict.fromkeys(("dispatch", "fast", "fast key", "fast rate limits", "answered"), 0.0)
    )
    _vigil = application

    def application(environ, start_response):  # noqa: ANN001, ANN201, F811
        global _in_api
        global _answered_in_warmup
        path = environ.get("PATH_INFO", "")
        if not path.startswith("/api/") or environ.get("HTTP_X_BENCH_WARMUP"):
            before = fastpath.stats["answered"]
            try:
                return _vigil(environ, start_response)
            finally:
                _answered_in_warmup += fastpath.stats["answered"] - before
        _in_api = True
        start = time.process_time()
        try:
            response = _vigil(environ, start_response)
            try:
                return [b"".join(response)]  # sent on here, inside the measure
            finally:
                response.close()  # request_finished, as gunicorn would send it
        finally:
            _in_api = False
            _cpu["total"] += time.process_time() - start
            _cpu["requests"] += 1
            _cpu["answered"] = fastpath.stats["answered"] - _answered_in_warmup
            if _cpu["requests"] % 50 == 1:
                _flush()


@login_not_required
def stack(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [path("__bench__/stack/", stack), path("", include("config.urls"))]
settings.ROOT_URLCONF = __name__
