"""A subject's add/edit page (``edit_page``): the role's permission to change it or add one, a new
one in the region ``?region=`` names, the live checks of ``apps.lib.liveforms`` while it is
typed, and the form's "Try" button, which runs a test of the unsaved subject and shows it. A page
that does more builds on ``subject_form``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Model
from django.forms import BaseModelForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from apps.accounts.roles import refuse_unless
from apps.lib import trials
from apps.lib.liveforms import TRY_FIELD, check, is_check


def subject_form(
    request: HttpRequest, form_class: type[BaseModelForm], pk: int | None
) -> tuple[Model | None, BaseModelForm]:
    """Subject ``pk`` of the form's model (None: a new one) and its form, once the role may
    change it (or add one); a new subject starts in the region ``?region=`` names."""
    model = form_class._meta.model
    meta = model._meta
    refuse_unless(request, f"{meta.app_label}.{'change' if pk else 'add'}_{meta.model_name}")
    subject = get_object_or_404(model, pk=pk) if pk else None
    initial = {}
    if subject is None and request.GET.get("region", "").isdigit():
        initial["region"] = int(request.GET["region"][:12])
    return subject, form_class(request.POST or None, instance=subject, initial=initial)


def edit_page(
    request: HttpRequest,
    form_class: type[BaseModelForm],
    pk: int | None,
    trial: Callable[[Any], Any],
) -> HttpResponse:
    """A subject's add/edit page, ``<app>/edit.html`` with the subject under its model's name:
    a save goes to the subject's page (``<app>:<model>_detail``); "Try" shows ``trial(subject)`` of
    the unsaved subject as ``trial``."""
    subject, form = subject_form(request, form_class, pk)
    if is_check(request):
        return check(request, form)
    tried = refused = None
    if request.method == "POST" and form.is_valid():
        if request.POST.get(TRY_FIELD) != "1":
            saved = form.save()
            return redirect(f"{saved._meta.app_label}:{saved._meta.model_name}_detail", pk=saved.pk)
        with trials.slot(request.user.pk) as refused:  # one per user, a few for everyone
            if refused is None:
                tried = trial(form.instance)
    meta = form_class._meta.model._meta
    context = {"form": form, meta.model_name: subject, "trial": tried, "trial_refused": refused}
    status = 400 if form.errors else 429 if refused else 200
    response = render(request, f"{meta.app_label}/edit.html", context, status=status)
    if refused:
        response["Retry-After"] = str(trials.RETRY_AFTER_S)
    return response
