"""The embedded broker: kombu's filesystem transport, with every message whole before it can be
read (docs/architecture.md, "Rules of the road").

kombu's own ``_put`` creates the message file under its final name and only then writes it;
its ``_get`` moves away any file with that name (``flock`` is advisory and the move ignores
it), so a worker polling at that moment reads an empty or half-written message, and the
JSONDecodeError stops its consumer ("Unrecoverable error": celery/kombu#1551). Seen under
``make run`` within two minutes. Here a message is written to a hidden ``.part`` file in the
same folder, which ``_get`` never matches (it reads ``<name>.<queue>.msg``), and renamed into
place, which is atomic: a reader sees no file or the whole message.

``install()`` (called by ``config.celery_app``, which every web, worker and beat process
imports before it connects) makes this the transport of the ``filesystem://`` scheme, so the
broker is still chosen by its URL alone and a ``redis://`` or ``amqp://`` URL is untouched.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from contextlib import suppress
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps, loads


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        """Put ``payload`` on ``queue``: written whole under a name no reader takes, then renamed."""
        # kombu's name: readers take messages in the order of the names.
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        folder = self.data_folder_out
        try:
            fd, part = tempfile.mkstemp(prefix=".", suffix=".part", dir=folder)
        except OSError as exc:
            raise ChannelError(f"Cannot add a message to {folder!r}") from exc
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(part, os.path.join(folder, name))
        except OSError as exc:
            with suppress(OSError):
                os.unlink(part)
            raise ChannelError(f"Cannot add file {name!r} to {folder!r}") from exc

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str, queue: str) -> None:
        """Add ``queue`` to the exchange's table: the new table is written whole, then renamed."""
        table = self._exchange_file(exchange)
        self.control_folder.mkdir(exist_ok=True)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        try:
            with open(table.with_name(f".{table.name}.lock"), "a") as turn:
                filesystem.lock(turn, filesystem.LOCK_EX)  # released when the file closes
                try:
                    queues = [filesystem.exchange_queue_t(*q) for q in loads(table.read_text())]
                except FileNotFoundError:
                    queues = []
                if entry in queues:
                    return
                queues.insert(0, entry)
                fd, part = tempfile.mkstemp(prefix=".", suffix=".part", dir=self.control_folder)
                with os.fdopen(fd, "wb") as f:
                    f.write(str_to_bytes(dumps(queues)))
                os.replace(part, table)
        except OSError as exc:
            raise ChannelError(f"Cannot open {table}") from exc


class Transport(filesystem.Transport):
    Channel = Channel


def install() -> None:
    """``filesystem://`` means this transport from now on, in this process."""
    TRANSPORT_ALIASES["filesystem"] = f"{__name__}:Transport"
