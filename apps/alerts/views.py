"""Incidents, a subject's history, channels, rules and silences."""

from __future__ import annotations

from datetime import timedelta

from csp.constants import NONE, SELF, UNSAFE_INLINE
from csp.decorators import csp
from django import forms
from django.contrib import messages
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_POST, require_safe

from apps.accounts.roles import refuse_unless, requires, writes_require
from apps.lib import liveforms
from apps.regions.models import Region, Subject

from . import routing, scopes, trial
from .forms import (
    ANY_SUBJECT,
    CHOOSE_SUBJECT,
    ChannelForm,
    RuleForm,
    SilenceForm,
    subject_options,
)
from .models import (
    NOTE_MAX,
    Cause,
    Channel,
    Incident,
    Notification,
    Rule,
    SentMessage,
    Silence,
    Transition,
)
from .timeline import timeline
from .transitions import wake_sender


def incidents_by_region(now=None) -> list[tuple[object, list[tuple[Incident, str]]]]:
    """Open incidents grouped by region, each with its state: open, acknowledged or silenced."""
    now = now or timezone.now()
    groups: dict[int, tuple[object, list]] = {}
    shown = Incident.objects.filter(closed=None, region__in=Region.objects.shown())
    for incident in shown.select_related("region", "acknowledged_by", "cause"):
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
    silences = Silence.objects.select_related("region", "author")
    ended = silences.filter(ends__lte=now, ends__gt=now - ENDED_SILENCES_SHOWN)
    return render(
        request,
        template,
        {
            "groups": incidents_by_region(now),
            "transitions": Transition.objects.select_related("region")[:30],
            "silences": [
                (s, routing.held_by(s).count())
                for s in silences.filter(ends__gt=now).order_by("starts")
            ],
            "ended_silences": ended.order_by("-ends")[:20],
            "now": now,
        },
    )


#: How long an ended silence stays listed on the Alerts page (each keeps its own page).
ENDED_SILENCES_SHOWN = timedelta(days=7)


@requires("alerts.acknowledge_incident")
@require_POST
def acknowledge(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(Incident, pk=pk).acknowledge(request.user)
    back = request.POST.get("next", "")
    if back == "incident":
        return redirect("alerts:incident", pk)
    return redirect("alerts:incidents")


@require_safe
def incident(request: HttpRequest, pk: int) -> HttpResponse:
    """One incident: what failed, its state, and its timeline (changes, escalations,
    acknowledgements, notes)."""
    found = get_object_or_404(
        Incident.objects.select_related("region", "acknowledged_by", "cause", "escalation_policy"),
        pk=pk,
    )
    return render(request, "alerts/incident.html", {"incident": found, "steps": timeline(found)})


@requires("alerts.annotate_incident")
@require_POST
def add_note(request: HttpRequest, pk: int) -> HttpResponse:
    """An operator's note on an incident; an empty or overlong one is refused in the page."""
    found = get_object_or_404(Incident, pk=pk)
    text = request.POST.get("text", "").strip()
    if not text or len(text) > NOTE_MAX:
        error = "Write the note." if not text else f"At most {NOTE_MAX} characters."
        context = {"incident": found, "steps": timeline(found), "note_error": error, "note": text}
        return render(request, "alerts/incident.html", context, status=400)
    found.add_note(request.user, text)
    return redirect("alerts:incident", pk)


@requires("alerts.acknowledge_incident")
@require_POST
def acknowledge_cause(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(Cause, pk=pk).acknowledge(request.user)
    return redirect("alerts:cause", pk)


@require_safe
def cause(request: HttpRequest, pk: int) -> HttpResponse:
    """An incident by cause: what failed, the subjects failing for it, and what each was sent
    or held back (inhibited: the cause's alert said it)."""
    found = get_object_or_404(Cause.objects.select_related("region"), pk=pk)
    members = found.members()
    rows = []
    for incident in members:
        notes = Notification.objects.filter(
            transition__content_type_id=incident.content_type_id,
            transition__object_id=incident.object_id,
            transition__cause=found,
        ).select_related("channel", "transition")
        rows.append((incident, list(notes.order_by("created", "pk"))))
    return render(request, "alerts/cause.html", {"cause": found, "rows": rows})


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


@requires("alerts.change_channel")
@require_POST
def test_channel(request: HttpRequest, pk: int) -> HttpResponse:
    """Send a test message through the channel now, and say on its page what came back."""
    channel = get_object_or_404(Channel, pk=pk)
    for answer in trial.send_test(channel, request.user.get_username()):
        to = "" if answer.recipient == channel.kind else f" to {answer.recipient}"
        if answer.error:
            messages.error(request, f"The test message{to} was not delivered: {answer.error}")
        else:
            messages.success(request, f"The test message{to} was delivered.")
    return redirect("alerts:channel", pk=channel.pk)


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


def _linked_subject(request: HttpRequest) -> Subject | None:
    """The subject ``?content_type=&object_id=`` names (the incident and history pages link a
    new rule or silence with them), or None."""
    return scopes.subject_of(
        request.GET.get("content_type", "")[:12], request.GET.get("object_id", "")[:20]
    )


def edit_rule(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    refuse_unless(request, "alerts.change_rule" if pk else "alerts.add_rule")
    rule = get_object_or_404(Rule, pk=pk) if pk else None
    linked = _linked_subject(request) if rule is None else None
    initial = {"subject": scopes.value_of(linked)} if linked is not None else {}
    form = RuleForm(request.POST or None, instance=rule, initial=initial)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("alerts:channels")
    context = {"form": form, "rule": rule, "subject": scopes.describe(linked) if linked else ""}
    return render(request, "alerts/rule.html", context, status=400 if form.errors else 200)


@requires("alerts.add_silence")
def new_silence(request: HttpRequest) -> HttpResponse:
    """``?content_type=&object_id=`` (the incident's and history page's links): a silence of
    that one subject, which the page names and asks nothing else about."""
    subject = _linked_subject(request)
    form = SilenceForm(request.POST or None, fixed=subject)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        form.save(author=request.user)
        return redirect("alerts:incidents")
    context = {
        "form": form,
        "subject": subject,
        "named": scopes.describe(subject) if subject else "",
    }
    return render(request, "alerts/silence.html", context, status=400 if form.errors else 200)


@require_safe
def subjects(request: HttpRequest) -> HttpResponse:
    """The subject ``<select>`` of a rule, silence, window or dependency form, its options
    narrowed to ``?subject_search=``, ``concern`` and ``region`` (htmx, as the search box is
    typed in); ``?field=upstream`` (a dependency's other end) for that field's list."""
    name = "upstream" if request.GET.get("field") == "upstream" else "subject"
    region = request.GET.get("region", "")
    found = scopes.find(
        request.GET.get(f"{name}_search", ""),
        concern=request.GET.get("concern", "")[:20],
        region=int(region) if region.isdigit() and len(region) < 12 else None,
        keep=request.GET.get(name, "")[:40],
    )
    # a dependency's ends (``?field=``) are required: its list offers no "Any subject"
    empty = CHOOSE_SUBJECT if "field" in request.GET else ANY_SUBJECT
    select = forms.Select(choices=subject_options(found, empty))
    html = select.render(
        name,
        request.GET.get(name, "")[:40],
        attrs={"id": f"id_{name}", "aria-describedby": f"id_{name}_helptext"},
    )
    return HttpResponse(html)


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
    messages = list(SentMessage.objects.only("pk", "to", "subject", "created")[:200])
    chosen = None
    raw = request.GET.get("message", "")
    if raw.isdigit() and len(raw) < 12:
        chosen = SentMessage.objects.filter(pk=int(raw)).first()
    elif messages:
        chosen = SentMessage.objects.filter(pk=messages[0].pk).first()
    context = {"messages_sent": messages, "chosen": chosen}
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
    message = get_object_or_404(SentMessage, pk=pk)
    return HttpResponse(message.html or "<p>(no HTML part)</p>", content_type="text/html")
