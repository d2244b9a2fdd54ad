"""API key management pages and the health check."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .forms import ApiKeyForm
from .models import ApiKey


def api_keys(request: HttpRequest) -> HttpResponse:
    new_key = None
    if request.method == "POST":
        form = ApiKeyForm(request.POST)
        if form.is_valid():
            key, new_key = ApiKey.issue(
                request.user, form.cleaned_data["name"], read_only=form.cleaned_data["read_only"]
            )
            form = ApiKeyForm()
    else:
        form = ApiKeyForm()
    keys = ApiKey.objects.filter(user=request.user)
    return render(
        request, "accounts/api_keys.html", {"form": form, "keys": keys, "new_key": new_key}
    )


@require_POST
def revoke_api_key(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(ApiKey, pk=pk, user=request.user).revoke()
    return redirect("accounts:api-keys")


@login_not_required
def healthz(request: HttpRequest) -> HttpResponse:
    """For load balancers and Docker healthchecks: the process answers and the DB connects."""
    connection.ensure_connection()
    return HttpResponse("ok", content_type="text/plain")
