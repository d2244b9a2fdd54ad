"""The embedded broker (config/filesystem_broker.py): a worker polling while messages are being
written never reads half of one. kombu's own filesystem transport, in the same race, read most
of 400 messages empty (JSONDecodeError, which stops a Celery worker's consumer)."""

from __future__ import annotations

import os
import threading
from queue import Empty

import pytest
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


@pytest.mark.slow  # over 1 s of CPU alone (docs/testing.md)
def test_a_reader_polling_during_writes_gets_every_message_whole(tmp_path):
    folder = str(tmp_path)
    options = {"data_folder_in": folder, "data_folder_out": folder, "store_processed": False}
    options["control_folder"] = str(tmp_path / "control")  # else ./control, in the checkout

    def produce() -> None:
        with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as conn:
            queue = conn.SimpleQueue("q")
            for i in range(MESSAGES):
                queue.put({"i": i, "body": BODY})

    received = []
    with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as conn:
        # Bound before anything is published, as a worker's queue is: a message published to an
        # exchange with no queue bound goes nowhere, in AMQP and in kombu alike.
        queue = conn.SimpleQueue("q")
        writer = threading.Thread(target=produce)
        writer.start()
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


def test_queues_bound_while_others_read_the_exchange_table_are_all_kept_and_read_whole(tmp_path):
    """kombu created the table empty and then locked it: a publisher read nothing (JSONDecodeError)
    and two first bindings could overwrite each other."""
    options = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path)}
    options["control_folder"] = str(tmp_path / "control")
    binders, per_binder = 6, 20
    errors: list[BaseException] = []
    done = threading.Event()

    def bind(n: int) -> None:
        with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as conn:
            channel = conn.default_channel
            channel.exchange_declare("x", "direct")
            for i in range(per_binder):
                channel.queue_declare(f"q{n}-{i}")
                channel.queue_bind(f"q{n}-{i}", exchange="x", routing_key=f"q{n}-{i}")

    def read() -> None:
        with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as conn:
            while not done.is_set():
                try:
                    conn.default_channel.get_table("x")
                except BaseException as exc:  # noqa: BLE001  (the test reports any)
                    errors.append(exc)
                    return

    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=bind, args=(n,)) for n in range(binders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()
    assert errors == []
    with Connection("filesystem://", transport=TRANSPORT, transport_options=options) as conn:
        table = conn.default_channel.get_table("x")
    assert len({q.queue for q in table}) == binders * per_binder
