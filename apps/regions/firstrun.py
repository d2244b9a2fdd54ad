"""First run: with no AWS account yet (and demo mode off), the home page walks an admin through
adding one: the IAM policy to copy, the role ARN and external id, and "Test access", which lists
the regions and what Vigil's concerns see in them (EFS: file systems) before anything is
saved."""

from __future__ import annotations

import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.accounts.roles import requires
from apps.lib import aws, liveforms

from . import concerns, ec2, iam
from .models import Account

#: Regions "Test access" looks into for file systems at most, and at once.
MAX_REGIONS = 40
PARALLEL = 8


class FirstAccountForm(forms.ModelForm):
    class Meta:
        model = Account
        fields = ["name", "role_arn", "external_id", "home_region"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["external_id"].help_text = (
            "A random value the role's trust policy requires; keep this one or paste yours. "
            "Shown on this page only."
        )


@dataclass
class AccessReport:
    identity: str = ""
    error: str = ""
    regions: list[tuple[str, str, list[str], str]] = field(default_factory=list)
    # (code, opt-in status, names of what the concerns see there, error)
    skipped: int = 0


def _seen(code: str, access: aws.AccountAccess) -> tuple[list[str], str]:
    """What every concern finds in the region (``Concern.seen_in_region``), or the error."""
    names: list[str] = []
    try:
        for concern in concerns.registered():
            if concern.seen_in_region is not None:
                names += concern.seen_in_region(code, access)
    except (ClientError, BotoCoreError) as exc:
        return names, aws.describe_error(exc)
    return names, ""


def try_access(account: Account) -> AccessReport:
    """What Vigil sees with the account's access: its own identity, the regions, and what the
    concerns see in each usable region (at most ``MAX_REGIONS``). Errors are said in words."""
    report = AccessReport()
    access = account.access
    try:
        sts = aws.client("sts", account.home_region, aws.AccountAccess())
        report.identity = sts.get_caller_identity().get("Arn", "")
    except (ClientError, BotoCoreError, NoCredentialsError) as exc:
        report.error = f"Vigil's own credentials: {aws.describe_error(exc)}"
        return report
    try:
        regions = ec2.describe_regions(access, account.home_region)
    except (ClientError, BotoCoreError) as exc:
        report.error = f"Listing regions: {aws.describe_error(exc)}"
        return report
    usable = [r for r in regions if r.usable]
    report.skipped = max(0, len(usable) - MAX_REGIONS)
    usable = usable[:MAX_REGIONS]
    with ThreadPoolExecutor(PARALLEL) as pool:
        seen = list(pool.map(lambda r: _seen(r.code, access), usable))
    report.regions = [
        (r.code, r.opt_in_status, names, error)
        for r, (names, error) in zip(usable, seen, strict=True)
    ]
    return report


@requires("regions.add_account")
def first_account(request: HttpRequest) -> HttpResponse:
    initial = {"external_id": secrets.token_urlsafe(24), "name": "Production"}
    form = FirstAccountForm(request.POST or None, initial=initial)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    report = None
    if request.method == "POST" and form.is_valid():
        if request.POST.get("_try") == "1":
            report = try_access(form.instance)
        else:
            form.save()
            return redirect("regions:home")
    external_id = form["external_id"].value() or ""
    context = {
        "form": form,
        "report": report,
        "permissions_policy": iam.permissions_policy(concerns.aws_actions()),
        "trust_policy": iam.trust_policy(report.identity if report else "", external_id),
        "actions": iam.actions(concerns.aws_actions()),
        "seen_by": ", ".join(c.label for c in concerns.registered() if c.seen_in_region),
    }
    return render(request, "regions/first_run.html", context, status=400 if form.errors else 200)
