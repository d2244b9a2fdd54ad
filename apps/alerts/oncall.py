"""The on-call set-up's pages: escalation policies (levels of channels with a delay each),
recurring maintenance windows and declared dependencies. Everyone reads them; admins (the
models' add/change/delete permissions) edit them; every change is in the audit trail, as the
models are ``track``-ed."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.db.models import Model, ProtectedError
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from apps.accounts.roles import refuse_unless, requires
from apps.lib import liveforms

from .forms import (
    AuthoredForm,
    DependencyForm,
    EscalationLevelFormSet,
    EscalationPolicyForm,
    WindowForm,
)
from .models import Dependency, EscalationPolicy, MaintenanceWindow


def _perm(model: type[Model], action: str) -> str:
    return f"{model._meta.app_label}.{action}_{model._meta.model_name}"


def _refuse_unless_may_save(request: HttpRequest, model: type[Model], pk: int | None) -> None:
    refuse_unless(request, _perm(model, "change" if pk else "add"))


@require_safe
def escalations(request: HttpRequest) -> HttpResponse:
    policies = EscalationPolicy.objects.prefetch_related("levels__channels", "rules")
    return render(request, "alerts/escalations.html", {"policies": policies})


def _edit(
    request: HttpRequest,
    model: type[Model],
    form_class: type[ModelForm],
    template: str,
    list_url: str,
    pk: int | None,
    levels_class: type[BaseInlineFormSet] | None = None,
) -> HttpResponse:
    """A row's add (``pk`` None) or edit page: its form (checked live), and its inline rows
    (``levels_class``) saved with it in one transaction; saved, back to ``list_url``. The
    template gets ``form``, ``levels`` and ``object`` (None when adding)."""
    _refuse_unless_may_save(request, model, pk)
    found = get_object_or_404(model, pk=pk) if pk else None
    form = form_class(request.POST or None, instance=found)
    # the rows hang on the form's instance, so they are saved against the row it makes
    levels = (
        levels_class(request.POST or None, instance=form.instance, prefix="levels")
        if levels_class
        else None
    )
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid() and (levels is None or levels.is_valid()):
        with transaction.atomic():
            if isinstance(form, AuthoredForm):
                form.save(author=request.user)
            else:
                form.save()
            if levels is not None:
                levels.save()
        return redirect(list_url)
    context = {"form": form, "levels": levels, "object": found}
    return render(request, template, context, status=400 if request.method == "POST" else 200)


def escalation(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    """A policy and its levels, in one form (the levels as rows; a row left empty adds none)."""
    return _edit(
        request,
        EscalationPolicy,
        EscalationPolicyForm,
        "alerts/escalation.html",
        "alerts:escalations",
        pk,
        levels_class=EscalationLevelFormSet,
    )


def _delete(request: HttpRequest, model: type[Model], pk: int, back: str) -> HttpResponse:
    found = get_object_or_404(model, pk=pk)
    try:
        found.delete()
    except ProtectedError as error:
        users = ", ".join(sorted(str(o) for o in error.protected_objects))
        messages.error(request, f"{found} is still used by {users}: change them first.")
    else:
        messages.success(request, f"Deleted {found}.")
    return redirect(back)


@requires("alerts.delete_escalationpolicy")
@require_POST
def delete_escalation(request: HttpRequest, pk: int) -> HttpResponse:
    return _delete(request, EscalationPolicy, pk, "alerts:escalations")


@require_safe
def windows(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    rows = [
        (w, w.schedule.open_at(now), w.schedule.next_open(now))
        for w in MaintenanceWindow.objects.select_related("region", "author")
    ]
    return render(request, "alerts/windows.html", {"rows": rows, "now": now})


def window(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return _edit(request, MaintenanceWindow, WindowForm, "alerts/window.html", "alerts:windows", pk)


@requires("alerts.delete_maintenancewindow")
@require_POST
def delete_window(request: HttpRequest, pk: int) -> HttpResponse:
    return _delete(request, MaintenanceWindow, pk, "alerts:windows")


@require_safe
def dependencies(request: HttpRequest) -> HttpResponse:
    found = Dependency.objects.select_related("author")
    return render(request, "alerts/dependencies.html", {"dependencies": found})


def dependency(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return _edit(
        request, Dependency, DependencyForm, "alerts/dependency.html", "alerts:dependencies", pk
    )


@requires("alerts.delete_dependency")
@require_POST
def delete_dependency(request: HttpRequest, pk: int) -> HttpResponse:
    return _delete(request, Dependency, pk, "alerts:dependencies")
