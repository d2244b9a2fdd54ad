"""Text a node pushed reaches every channel escaped for it: no disguised link or mention in
Slack's mrkdwn, one plain line in PagerDuty's summary and an email's subject, markup escaped in
the email's HTML, data in the webhook's JSON. The text arrives by a real push request."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from apps.alerts import delivery
from apps.galera import tasks
from apps.galera.models import Cluster, Node
from tests.helpers import SHARED_FIXTURES

pytestmark = pytest.mark.django_db

EVIL = "<https://evil.example/login|Vigil: sign in again> & <!channel>\x1b[2J Bcc: x@evil.example"
ROUTING_KEY = "R0123456789abcdefABCDEF012345678"


def status_with_comment(comment: str) -> str:
    """The fixture's SHOW STATUS as ``mysql -B`` prints it (name, tab, value), with ``comment``
    as the node's state comment and a state that is not Synced."""
    text = (SHARED_FIXTURES / "wsrep" / "deimosfr-4node-synced-primary.txt").read_text()
    rows = dict(re.findall(r"^\| (wsrep_\w+)\s*\| (.*?)\s*\|$", text, re.M))
    rows |= {"wsrep_local_state": "2", "wsrep_local_state_comment": comment}
    return "".join(f"{name}\t{value}\n" for name, value in rows.items())


def test_a_pushed_state_comment_reaches_every_channel_escaped(
    site, api_client, receiver, make_channel
):
    make_channel("slack", secret=receiver.url + "/slack")
    make_channel("pagerduty", target=receiver.url + "/pagerduty", secret=ROUTING_KEY)
    make_channel("webhook", target=receiver.url + "/hook", secret="s" * 20)
    make_channel("email", target="ops@example.com")
    cluster = Cluster.objects.create(region=site, name="pushed", expected_data_nodes=1)
    node = Node.objects.create(
        cluster=cluster, name="db1", host="127.0.0.11", port=3306, mode=Node.Mode.PUSH
    )
    pushed = api_client.post(
        f"/api/galera/nodes/{node.pk}/report",
        status_with_comment(EVIL),
        content_type="text/plain",
        HTTP_AUTHORIZATION=f"Bearer {node.issue_token()}",
    )
    assert pushed.status_code == 200, pushed.content
    tasks.poll_cluster(cluster.pk)
    cluster.refresh_from_db()
    assert "<!channel>" in cluster.reason  # stored as pushed; escaped where it is sent

    delivery.send_due()

    bodies = {r.path: r for r in receiver.requests}
    slack = bodies["/slack"].body.decode()
    assert "<https://evil" not in slack and "<!channel>" not in slack
    (attachment,) = bodies["/slack"].json["attachments"]
    assert attachment["text"].startswith(
        "db1 is &lt;https://evil.example/login|Vigil: sign in again&gt; &amp; &lt;!channel&gt;"
    )
    assert "\x1b" not in attachment["text"]

    payload = bodies["/pagerduty"].json["payload"]
    shown = payload["summary"] + payload["custom_details"]["reason"] + payload["component"]
    assert "db1 is <https://evil.example/login|Vigil: sign in again>" in payload["summary"]
    assert not re.search(r"[\x00-\x1f\x7f]", shown)  # plain text, one line

    event = bodies["/hook"].json["events"][0]
    assert EVIL in event["reason"]  # JSON carries it as data, escaped by json itself
    assert not re.search(r"[\x00-\x1f]", event["summary"])

    (message,) = mail.outbox
    assert "\n" not in message.subject and "\x1b" not in message.subject
    html = message.alternatives[0][0]
    assert "<https://evil" not in html and "&lt;https://evil.example/login" in html
