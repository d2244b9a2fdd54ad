"""Live forms: a configuration form says what is wrong while it is typed, with the very checks
that run when it is saved (the form's and the model's ``clean``), through htmx.

The template renders ``{% include "liveforms/form.html" with form=form submit="Save" %}``: the
form posts normally when submitted, and on ``input``/``change`` htmx posts it to the same URL
with ``_check=1``. The view answers that post with ``liveforms.check(request, form)`` before
saving anything: nothing is saved, and each field's error slot (``<id>-live-errors``) comes back
as an out-of-band swap, for the fields already filled in and the one being typed in. The check
needs the same permission as the save (it is the same POST). A subject's add/edit page is
``apps.regions.editing.edit_page``, built on these.
"""

from __future__ import annotations

from django.forms import BaseForm
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

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
