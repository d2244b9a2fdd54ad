"""Live forms: a configuration form says what is wrong while it is typed, with the very checks
that run when it is saved (the form's and the model's ``clean``), through htmx.

The pattern, for any ModelForm page:

- the template renders ``{% include "liveforms/form.html" with form=form submit="Save" %}``:
  the form posts normally when submitted, and on ``input``/``change`` htmx posts it to the same
  URL with ``_check=1``; every field has an error slot (``<id>-live-errors``);
- the view answers such a post with ``liveforms.check(request, form)`` before saving anything:
  the form is validated, nothing is saved, and each slot comes back as an out-of-band swap, so
  the field being typed in keeps its focus and caret. Errors are shown for the fields already
  filled in and the one being typed in, not for those the user has not reached yet.

The view needs the same permission for the check as for the save (it is the same POST).

A subject's add/edit page is ``edit_page`` (the form's "Try" button runs a test of the unsaved
subject and shows it), or builds on ``subject_form`` when it does more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Model
from django.forms import BaseForm, BaseModelForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string

from apps.accounts.roles import refuse_unless
from apps.lib import trials

CHECK_FIELD = "_check"
TRY_FIELD = "_try"


def is_check(request: HttpRequest) -> bool:
    """An htmx post asking only for the form's errors."""
    return request.method == "POST" and request.POST.get(CHECK_FIELD) == "1"


def check(request: HttpRequest, form: BaseForm) -> HttpResponse:
    """The form's error slots as out-of-band swaps; nothing is saved."""
    form.is_valid()
    typing = request.headers.get("HX-Trigger-Name", "")
    shown = {
        name
        for name in form.fields
        if name == typing or any(v.strip() for v in request.POST.getlist(form.add_prefix(name)))
    }
    html = render_to_string(
        "liveforms/errors.html",
        {"form": form, "shown": shown, "non_field_errors": form.non_field_errors()},
        request=request,
    )
    return HttpResponse(html)


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
    a save goes to the subject's page (``<app>:<model>``); "Try" shows ``trial(subject)`` of
    the unsaved subject as ``trial``."""
    subject, form = subject_form(request, form_class, pk)
    if is_check(request):
        return check(request, form)
    tried = refused = None
    if request.method == "POST" and form.is_valid():
        if request.POST.get(TRY_FIELD) != "1":
            saved = form.save()
            return redirect(f"{saved._meta.app_label}:{saved._meta.model_name}", pk=saved.pk)
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
