"""bench/load.sh's WSGI application: Vigil's, plus ``/__bench__/stack/``.

That view answers "ok" through every middleware (host check, HTTPS, sessions, CSRF, login
required, time zone, audit, htmx, CSP, axes) and reads nothing: no session cookie is sent and
it needs no login. It is the floor of a request through the whole stack, which ``/healthz`` no
longer is: the first middleware answers it (``HealthzMiddleware``), so that container probes by
address pass ``ALLOWED_HOSTS``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

from django.conf import settings  # noqa: E402
from django.contrib.auth.decorators import login_not_required  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpRequest, HttpResponse  # noqa: E402
from django.urls import include, path  # noqa: E402

application = get_wsgi_application()


@login_not_required
def stack(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [path("__bench__/stack/", stack), path("", include("config.urls"))]
settings.ROOT_URLCONF = __name__
