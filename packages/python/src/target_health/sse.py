"""An incremental Server-Sent Events parser (the WHATWG event-stream rules the API's stream follows).

Fed lines as they arrive; yields one `SseEvent` per blank line that ends an event with data. Comments
(`: heartbeat`) only prove the connection is alive; `id` is kept as the last event id even across events
without one, as EventSource does, so a reconnect can send `Last-Event-ID`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str
    id: str | None


class SseParser:
    def __init__(self) -> None:
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None
        self.comments = 0
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None

    def feed_line(self, line: str) -> SseEvent | None:
        """One line without its line ending; returns the event it completes, if any."""
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            self.comments += 1
            return None
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        elif field == "id":
            if "\0" not in value:
                self._id = value
        elif field == "retry":
            if value.isdigit():
                self.retry_ms = int(value)
        return None

    def _dispatch(self) -> SseEvent | None:
        if self._id is not None:
            self.last_event_id = self._id
        if not self._data:
            self._event = ""
            self._id = None
            return None
        event = SseEvent(event=self._event or "message", data="\n".join(self._data), id=self.last_event_id)
        self._event = ""
        self._data = []
        self._id = None
        return event

    def feed(self, chunk: str) -> list[SseEvent]:
        """Whole lines (CRLF, LF or CR endings); the caller passes complete lines only."""
        out = []
        for line in chunk.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            ev = self.feed_line(line)
            if ev is not None:
                out.append(ev)
        return out
