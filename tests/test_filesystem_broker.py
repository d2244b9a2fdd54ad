"""The embedded broker (config/filesystem_broker.py): a worker polling while messages are being
written never reads half of one. kombu's own filesystem transport, in the same race, read most
of 400 messages empty (JSONDecodeError, which stops a Celery worker's consumer)."""

from __future__ import annotations

import os
import threading
from queue import Empty

from kombu import Connection
from kombu.transport import get_transport_cls

from config.filesystem_broker import Transport

TRANSPORT = "config.filesystem_broker:Transport"
MESSAGES = 300
BODY = "x" * 300_000  # a big message: writing it takes long enough for a reader to look


def test_the_filesystem_scheme_means_the_whole_message_transport_and_other_urls_are_untouched():
    from config.celery_app import app  # installs it, as every Vigil process does

    assert get_transport_cls("filesystem") is Transport
    assert get_transport_cls("redis") is not Transport
    with app.connection_for_write("redis://127.0.0.1:1/0") as conn:
        assert conn.transport_cls == "redis"
    with app.connection_for_write("filesystem://") as conn:
        assert isinstance(conn.transport, Transport)


def test_a_reader_polling_during_writes_gets_every_message_whole(tmp_path):
    folder = str(tmp_path)
    options = {"data_folder_in": folder, "data_folder_out": folder, "store_processed": False}
    options["control_folder"] = str(tmp_path / "control")  # else ./control, in the checkout

    def produce() -> None:
        with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as conn:
            queue = conn.SimpleQueue("q")
            for i in range(MESSAGES):
                queue.put({"i": i, "body": BODY})

    writer = threading.Thread(target=produce)
    writer.start()
    received = []
    with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as conn:
        queue = conn.SimpleQueue("q")
        while len(received) < MESSAGES:
            try:  # polls as fast as it can while the writer writes: any error fails the test
                message = queue.get(timeout=0.001 if writer.is_alive() else 5)
            except Empty:
                if writer.is_alive():
                    continue
                break
            assert len(message.payload["body"]) == len(BODY)
            received.append(message.payload["i"])
            message.ack()
    writer.join()
    assert received == list(range(MESSAGES))
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".part")]
