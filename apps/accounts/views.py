"""The sign-in page, API key management pages and the health check."""

from __future__ import annotations

from allauth.account.views import LoginView
from auditlog.models import LogEntry
from auditlog.registry import auditlog
from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_not_required
from django.core.paginator import Paginator
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import capfirst
from django.views.decorators.http import require_POST, require_safe

from .audit import changes
from .forms import ApiKeyForm
from .models import ApiKey, KeyRefused
from .roles import VIEWER, requires, role_of


class SignInView(LoginView):
    """allauth's sign-in page, told which ways are configured (the template shows them)."""

    def get_context_data(self, **kwargs: object) -> dict:
        context = super().get_context_data(**kwargs)
        context["ldap"] = settings.VIGIL_LDAP_ENABLED
        context["superusers_only"] = settings.VIGIL_LOCAL_SIGNIN == "superusers"
        context["refused"] = getattr(self.request, "vigil_refused", None)
        return context


sign_in = SignInView.as_view()


def api_keys(request: HttpRequest) -> HttpResponse:
    """One's own keys: anyone logged in; a viewer is offered (and given) read-only keys only."""
    new_key = None
    viewer = role_of(request.user) == VIEWER
    refused = ""
    if request.method == "POST":
        form = ApiKeyForm(request.POST, read_only_only=viewer)
        if form.is_valid():
            try:
                _, new_key = ApiKey.issue(
                    request.user,
                    form.cleaned_data["name"],
                    read_only=form.cleaned_data["read_only"],
                )
            except KeyRefused as error:
                refused = str(error)
            else:
                form = ApiKeyForm(read_only_only=viewer)
    else:
        form = ApiKeyForm(read_only_only=viewer)
    keys = ApiKey.objects.filter(user=request.user)
    context = {"form": form, "keys": keys, "new_key": new_key, "refused": refused}
    return render(request, "accounts/api_keys.html", context, status=403 if refused else 200)


@require_POST
def revoke_api_key(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(ApiKey, pk=pk, user=request.user).revoke()
    return redirect("accounts:api-keys")


@login_not_required
def healthz(request: HttpRequest) -> HttpResponse:
    """For load balancers and Docker healthchecks: the process answers and the DB connects."""
    connection.ensure_connection()
    return HttpResponse("ok", content_type="text/plain")


AUDIT_PAGE_ROWS = 100


@requires("auditlog.view_logentry")
@require_safe
def audit(request: HttpRequest) -> HttpResponse:
    """The audit trail, newest first (admins): ``?actor=<username>``, ``?model=app.model``."""
    entries = LogEntry.objects.select_related("actor", "content_type").order_by("-timestamp", "-pk")
    actor = request.GET.get("actor", "").strip()
    if actor:
        entries = entries.filter(actor__username=actor)
    model = request.GET.get("model", "").strip()
    if "." in model:
        app_label, _, name = model.partition(".")
        entries = entries.filter(content_type__app_label=app_label, content_type__model=name)
    page = Paginator(entries, AUDIT_PAGE_ROWS).get_page(request.GET.get("page"))
    rows = [(entry, changes(entry)) for entry in page]
    people = get_user_model().objects.order_by("username").values_list("username", flat=True)
    return render(
        request,
        "accounts/audit.html",
        {
            "page": page,
            "rows": rows,
            "actor": actor,
            "model": model,
            "kinds": audited_kinds(),
            "people": list(people[:AUDIT_PEOPLE_LISTED]),
        },
    )


#: People offered by the audit page's "By" list (a bigger team types a name in the URL).
AUDIT_PEOPLE_LISTED = 500


def audited_kinds() -> list[tuple[str, str]]:
    """``[("probes.target", "Probe target (Keep-alive)"), ...]``: what the trail records, for
    the audit page's "Kind" list."""
    kinds = []
    for model in auditlog.get_models():
        meta = model._meta
        area = apps.get_app_config(meta.app_label).verbose_name
        kinds.append(
            (f"{meta.app_label}.{meta.model_name}", f"{capfirst(meta.verbose_name)} ({area})")
        )
    return sorted(kinds, key=lambda kind: kind[1].lower())


@login_not_required
@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico`` for clients that ask without reading the page's icon link: the neutral
    icon (the page's link carries the worst status, for those logged in)."""
    from django.contrib.staticfiles import finders

    path = finders.find("img/favicon-none.svg")
    with open(path, "rb") as icon:
        response = HttpResponse(icon.read(), content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response
