"""One's own display settings: the colour scheme (the header's toggle) and the time zone."""

from __future__ import annotations

import zoneinfo

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from .models import Preference
from .timezones import zone

#: The header's toggle goes auto -> dark -> light -> auto.
NEXT_THEME = {"auto": "dark", "dark": "light", "light": "auto"}


class PreferenceForm(forms.ModelForm):
    class Meta:
        model = Preference
        fields = ["theme", "time_zone"]
        widgets = {"theme": forms.RadioSelect}

    def clean_time_zone(self) -> str:
        name = self.cleaned_data["time_zone"].strip()
        if name and zone(name) is None:
            raise forms.ValidationError(
                f"{name[:64]!r} is not a time zone Vigil knows: use an IANA name such as "
                "Europe/Berlin or America/New_York, or leave it empty for the browser's."
            )
        return name


def _safe_next(request: HttpRequest) -> str:
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return ""


def preferences(request: HttpRequest) -> HttpResponse:
    """Anyone logged in sets their own; the header's toggle posts ``theme`` alone."""
    preference = Preference.objects.filter(user=request.user).first() or Preference(
        user=request.user
    )
    if request.method == "POST":
        if set(request.POST) <= {"theme", "next", "csrfmiddlewaretoken"}:
            theme = request.POST.get("theme", "")
            if theme not in Preference.Theme.values:
                return HttpResponse("Unknown theme.", status=400, content_type="text/plain")
            preference.theme = theme
            preference.remember(request)
            return redirect(_safe_next(request) or "accounts:preferences")
        form = PreferenceForm(request.POST, instance=preference)
        if form.is_valid():
            form.save(commit=False).remember(request)
            return redirect("accounts:preferences")
        status = 400
    else:
        form = PreferenceForm(instance=preference)
        status = 200
    zones = sorted(zoneinfo.available_timezones())
    return render(
        request, "accounts/preferences.html", {"form": form, "zones": zones}, status=status
    )
