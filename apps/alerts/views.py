"""Incidents, a subject's history, channels, rules and silences."""

from __future__ import annotations

from csp.constants import NONE, SELF, UNSAFE_INLINE
from csp.decorators import csp
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_POST, require_safe

from apps.accounts.roles import refuse_unless, requires, writes_require
from apps.lib import liveforms
from apps.regions.models import Region

from . import content, routing
from .forms import ChannelForm, RuleForm, SilenceForm
from .models import Channel, Incident, Notification, Rule, Silence, Transition
from .transitions import wake_sender


def incidents_by_region(now=None) -> list[tuple[object, list[tuple[Incident, str]]]]:
    """Open incidents grouped by region, each with its state: open, acknowledged or silenced."""
    now = now or timezone.now()
    groups: dict[int, tuple[object, list]] = {}
    shown = Incident.objects.filter(closed=None, region__in=Region.objects.shown())
    for incident in shown.select_related("region", "acknowledged_by"):
        if routing.active_silence(incident, now):
            state = "silenced"
        elif incident.acknowledged:
            state = "acknowledged"
        else:
            state = "open"
        groups.setdefault(incident.region_id, (incident.region, []))[1].append((incident, state))
    return sorted(groups.values(), key=lambda g: str(g[0]))


@require_safe
def incidents(request: HttpRequest) -> HttpResponse:
    template = "alerts/incidents.html#incidents" if request.htmx else "alerts/incidents.html"
    now = timezone.now()
    silences = Silence.objects.filter(ends__gt=now).select_related("region", "author")
    return render(
        request,
        template,
        {
            "groups": incidents_by_region(now),
            "transitions": Transition.objects.select_related("region")[:30],
            "silences": [(s, routing.held_by(s).count()) for s in silences.order_by("starts")],
            "now": now,
        },
    )


@requires("alerts.acknowledge_incident")
@require_POST
def acknowledge(request: HttpRequest, pk: int) -> HttpResponse:
    Incident.objects.filter(pk=pk, closed=None, acknowledged=None).update(
        acknowledged=timezone.now(), acknowledged_by=request.user
    )
    return redirect("alerts:incidents")


@require_safe
def history(request: HttpRequest, content_type: int, object_id: int) -> HttpResponse:
    ct = get_object_or_404(ContentType, pk=content_type)
    transitions = Transition.objects.filter(content_type=ct, object_id=object_id)
    latest = transitions.first()
    return render(
        request,
        "alerts/history.html",
        {
            "transitions": transitions[:200],
            "label": latest.subject_label if latest else "?",
            "content_type": ct.pk,
            "object_id": object_id,
        },
    )


@writes_require("alerts.add_channel")
def channels(request: HttpRequest) -> HttpResponse:
    form = ChannelForm(request.POST or None)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("alerts:channels")
    rules = Rule.objects.prefetch_related("channels").select_related("region")
    return render(
        request,
        "alerts/channels.html",
        {"channels": Channel.objects.all(), "rules": rules, "form": form},
    )


FAILED_SHOWN = 50


@writes_require("alerts.change_channel")
def channel(request: HttpRequest, pk: int) -> HttpResponse:
    """A channel: its health, what did not reach someone (with "send again"), and its form."""
    channel = get_object_or_404(Channel, pk=pk)
    form = ChannelForm(request.POST or None, instance=channel)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("alerts:channel", pk=channel.pk)
    failed = channel.failed_notifications().select_related("transition__region")
    return render(
        request,
        "alerts/channel.html",
        {
            "channel": channel,
            "form": form,
            "failed": failed.order_by("-created")[:FAILED_SHOWN],
            "failed_count": failed.count(),
            "stuck": channel.notifications.filter(state=Notification.State.PENDING)
            .exclude(last_error="")
            .count(),
        },
    )


def resend(notifications) -> int:
    """Put failed notifications (or their refused recipients) back in the outbox."""
    count = notifications.update(
        state=Notification.State.PENDING,
        refused={},
        failure="",
        next_attempt=timezone.now(),
        lease_until=None,
        sent=None,
    )
    if count:
        transaction.on_commit(wake_sender)
    return count


@requires("alerts.resend_notification")
@require_POST
def resend_notification(request: HttpRequest, pk: int, notification: int) -> HttpResponse:
    channel = get_object_or_404(Channel, pk=pk)
    resend(channel.failed_notifications().filter(pk=notification))
    return redirect("alerts:channel", pk=channel.pk)


def edit_rule(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    refuse_unless(request, "alerts.change_rule" if pk else "alerts.add_rule")
    rule = get_object_or_404(Rule, pk=pk) if pk else None
    initial = {k: request.GET[k] for k in ("content_type", "object_id") if k in request.GET}
    form = RuleForm(request.POST or None, instance=rule, initial=initial)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("alerts:channels")
    subject = _subject_label(form["content_type"].value(), form["object_id"].value())
    return render(request, "alerts/rule.html", {"form": form, "rule": rule, "subject": subject})


@requires("alerts.add_silence")
def new_silence(request: HttpRequest) -> HttpResponse:
    """``?content_type=&object_id=`` (the incident's and history page's links) picks a subject."""
    initial = {k: request.GET[k] for k in ("content_type", "object_id") if k in request.GET}
    form = SilenceForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        form.save(author=request.user)
        return redirect("alerts:incidents")
    subject = _subject_label(form["content_type"].value(), form["object_id"].value())
    return render(request, "alerts/silence.html", {"form": form, "subject": subject})


def _subject_label(content_type: object, object_id: object) -> str:
    if not content_type or not object_id:
        return ""
    latest = Transition.objects.filter(content_type=content_type, object_id=object_id).first()
    if latest is None:
        return f"subject {object_id}"
    return f"{content.concern_label(latest.concern)} {latest.subject_label}"


@require_safe
def silence(request: HttpRequest, pk: int) -> HttpResponse:
    """A silence and what it is holding back: open incidents it kept from being sent."""
    silence = get_object_or_404(Silence.objects.select_related("region", "author"), pk=pk)
    return render(
        request,
        "alerts/silence_detail.html",
        {"silence": silence, "held": routing.held_by(silence), "now": timezone.now()},
    )


def end_silence(silence: Silence) -> int:
    """End ``silence`` now (a save: the audit trail records who) and send what it held."""
    now = timezone.now()
    silence.ends = now
    silence.save(update_fields=["ends"])
    released = routing.release_silence(silence, now)
    if released:
        transaction.on_commit(wake_sender)
    return released


@requires("alerts.delete_silence")
@require_POST
def expire_silence(request: HttpRequest, pk: int) -> HttpResponse:
    silence = Silence.objects.filter(pk=pk, ends__gt=timezone.now()).first()
    if silence is not None:
        end_silence(silence)
    return redirect("alerts:incidents")


@require_safe
def sent_messages(request: HttpRequest) -> HttpResponse:
    """Demo mode: the emails Vigil sent, as they would arrive (``apps.alerts.mailbox``)."""
    from apps.demo.mode import demo_enabled

    from .models import SentMessage

    messages = list(SentMessage.objects.only("pk", "to", "subject", "created")[:200])
    chosen = None
    raw = request.GET.get("message", "")
    if raw.isdigit() and len(raw) < 12:
        chosen = SentMessage.objects.filter(pk=int(raw)).first()
    elif messages:
        chosen = SentMessage.objects.filter(pk=messages[0].pk).first()
    context = {"messages_sent": messages, "chosen": chosen, "demo": demo_enabled()}
    return render(request, "alerts/sent.html", context)


@require_safe
@xframe_options_sameorigin
@csp(
    {
        "default-src": [NONE],
        "style-src": [UNSAFE_INLINE],
        "img-src": ["data:"],
        "frame-ancestors": [SELF],
        "sandbox": [True],
    }
)
def sent_message_html(request: HttpRequest, pk: int) -> HttpResponse:
    """One sent email's HTML part, for the sandboxed frame of the "Sent messages" page: no
    script runs, nothing is fetched, only this site may frame it."""
    from .models import SentMessage

    message = get_object_or_404(SentMessage, pk=pk)
    return HttpResponse(message.html or "<p>(no HTML part)</p>", content_type="text/html")
