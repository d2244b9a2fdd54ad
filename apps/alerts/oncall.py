"""The on-call set-up's pages: escalation policies (levels of channels with a delay each),
recurring maintenance windows and declared dependencies. Everyone reads them; admins (the
models' add/change/delete permissions) edit them; every change is in the audit trail, as the
models are ``track``-ed."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.db.models import Model, ProtectedError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from apps.accounts.roles import refuse_unless, requires
from apps.lib import liveforms

from .forms import DependencyForm, EscalationLevelFormSet, EscalationPolicyForm, WindowForm
from .models import Dependency, EscalationPolicy, MaintenanceWindow


def _perm(model: type[Model], action: str) -> str:
    return f"{model._meta.app_label}.{action}_{model._meta.model_name}"


def _refuse_unless_may_save(request: HttpRequest, model: type[Model], pk: int | None) -> None:
    refuse_unless(request, _perm(model, "change" if pk else "add"))


@require_safe
def escalations(request: HttpRequest) -> HttpResponse:
    policies = EscalationPolicy.objects.prefetch_related("levels__channels", "rules")
    return render(request, "alerts/escalations.html", {"policies": policies})


def escalation(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    """A policy and its levels, in one form (the levels as rows; a row left empty adds none)."""
    _refuse_unless_may_save(request, EscalationPolicy, pk)
    policy = get_object_or_404(EscalationPolicy, pk=pk) if pk else EscalationPolicy()
    form = EscalationPolicyForm(request.POST or None, instance=policy)
    levels = EscalationLevelFormSet(request.POST or None, instance=policy, prefix="levels")
    if request.method == "POST" and form.is_valid() and levels.is_valid():
        with transaction.atomic():
            form.save()
            levels.instance = form.instance
            levels.save()
        return redirect("alerts:escalations")
    invalid = request.method == "POST"
    context = {"form": form, "levels": levels, "policy": policy if pk else None}
    return render(request, "alerts/escalation.html", context, status=400 if invalid else 200)


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
    _refuse_unless_may_save(request, MaintenanceWindow, pk)
    found = get_object_or_404(MaintenanceWindow, pk=pk) if pk else None
    form = WindowForm(request.POST or None, instance=found)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        form.save(author=request.user)
        return redirect("alerts:windows")
    context = {"form": form, "window": found}
    return render(request, "alerts/window.html", context, status=400 if form.errors else 200)


@requires("alerts.delete_maintenancewindow")
@require_POST
def delete_window(request: HttpRequest, pk: int) -> HttpResponse:
    return _delete(request, MaintenanceWindow, pk, "alerts:windows")


@require_safe
def dependencies(request: HttpRequest) -> HttpResponse:
    found = Dependency.objects.select_related("author")
    return render(request, "alerts/dependencies.html", {"dependencies": found})


def dependency(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    _refuse_unless_may_save(request, Dependency, pk)
    found = get_object_or_404(Dependency, pk=pk) if pk else None
    form = DependencyForm(request.POST or None, instance=found)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        form.save(author=request.user)
        return redirect("alerts:dependencies")
    context = {"form": form, "dependency": found}
    return render(request, "alerts/dependency.html", context, status=400 if form.errors else 200)


@requires("alerts.delete_dependency")
@require_POST
def delete_dependency(request: HttpRequest, pk: int) -> HttpResponse:
    return _delete(request, Dependency, pk, "alerts:dependencies")
