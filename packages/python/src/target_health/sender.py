"""Posts events to the API (`POST /v1/events`, NDJSON) in batches from a background thread.

The crawl never waits for it: `offer()` puts an event on a bounded queue and returns at once (a full
queue drops the event and counts it). The thread sends a batch when it has `batch_size` events or
`interval` seconds have passed, and resends the same batch on 429, 503, other 5xx and network errors with
a growing back-off (honouring `Retry-After`): every event has an `eventId`, so a batch stored by an
attempt whose answer was lost comes back as duplicates, never twice. Refused lines are logged with the
API's error lines (they name the field and the fix) and counted.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable

log = logging.getLogger("target_health")

RETRYABLE = {408, 425, 429, 500, 502, 503, 504}
# Put on the queue by close(): wakes a thread waiting out the batch interval for more events.
_WAKE: dict[str, Any] = {}


@dataclass
class SenderCounts:
    sent: int = 0  # accepted by the API (stored now or before)
    duplicates: int = 0
    rejected: int = 0  # refused by the API (logged with its error lines)
    dropped: int = 0  # never delivered: the queue was full, or the close deadline passed
    retries: int = 0  # batches sent again after a retryable failure
    batches: int = 0
    last_error: str | None = field(default=None)


class EventSender:
    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        batch_size: int = 500,
        interval: float = 1.0,
        max_queue: int = 100_000,
        timeout: float = 30.0,
        max_backoff: float = 30.0,
        on_counts: Callable[[SenderCounts], None] | None = None,
    ) -> None:
        self.url = api_url.rstrip("/") + "/v1/events"
        self.token = token
        self.batch_size = max(1, batch_size)
        self.interval = interval
        self.timeout = timeout
        self.max_backoff = max_backoff
        self.counts = SenderCounts()
        self._on_counts = on_counts
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=max_queue)
        self._stop = threading.Event()
        self._deadline: float | None = None
        self._thread = threading.Thread(target=self._run, name="target-health-sender", daemon=True)
        self._lock = threading.Lock()

    def start(self) -> None:
        self._thread.start()

    def offer(self, event: dict[str, Any]) -> bool:
        """Queues an event without blocking; False (and counted as dropped) when the queue is full."""
        try:
            self._queue.put_nowait(event)
            return True
        except queue.Full:
            self._count(dropped=1)
            return False

    def close(self, timeout: float = 30.0) -> SenderCounts:
        """Sends what is queued, for at most `timeout` seconds; what is left is counted as dropped. Blocking:
        call it from a thread (the extension uses deferToThread), never on the reactor."""
        self._deadline = time.monotonic() + timeout
        self._stop.set()
        try:
            self._queue.put_nowait(_WAKE)
        except queue.Full:
            pass  # a full queue does not keep the thread waiting
        if self._thread.is_alive():
            self._thread.join(timeout + 1)
        self._drain_as_dropped()
        return self.counts

    # --- the thread ------------------------------------------------------------------------------

    def _count(self, **deltas: int) -> None:
        with self._lock:
            for name, delta in deltas.items():
                setattr(self.counts, name, getattr(self.counts, name) + delta)
        if self._on_counts:
            self._on_counts(self.counts)

    def _drain_as_dropped(self) -> None:
        n = 0
        while True:
            try:
                if self._queue.get_nowait() is not _WAKE:
                    n += 1
            except queue.Empty:
                break
        if n:
            self._count(dropped=n)
            log.error(
                "target-health: %d events were not delivered before the close deadline (API unreachable: %s)",
                n,
                self.counts.last_error,
            )

    def _past_deadline(self) -> bool:
        return self._deadline is not None and time.monotonic() > self._deadline

    def _collect(self) -> list[dict[str, Any]]:
        batch: list[dict[str, Any]] = []
        wait_until = time.monotonic() + self.interval
        while len(batch) < self.batch_size:
            remaining = wait_until - time.monotonic()
            if self._stop.is_set():
                remaining = 0  # closing: send what is there now
            try:
                event = self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait()
            except queue.Empty:
                break
            if event is not _WAKE:
                batch.append(event)
        return batch

    def _run(self) -> None:
        while True:
            batch = self._collect()
            if batch:
                self._deliver(batch)
            elif self._stop.is_set():
                return
            if self._past_deadline():
                return

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        body = "\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in batch).encode("utf-8")
        backoff = 0.5
        attempt = 0
        while True:
            attempt += 1
            wait = self._post_once(batch, body)
            if wait is None:
                return
            if self._past_deadline():
                self._count(dropped=len(batch))
                log.error(
                    "target-health: gave up on a batch of %d events at the close deadline (%s)",
                    len(batch),
                    self.counts.last_error,
                )
                return
            self._count(retries=1)
            delay = min(self.max_backoff, max(backoff, wait))
            if attempt == 1 or attempt % 10 == 0:
                log.warning(
                    "target-health: sending %d events failed (%s); retrying in %.1fs (attempt %d)",
                    len(batch),
                    self.counts.last_error,
                    delay,
                    attempt,
                )
            # Interruptible: a close wakes it to try once more before its deadline.
            self._stop.wait(delay) if not self._stop.is_set() else time.sleep(min(delay, 0.5))
            backoff = min(self.max_backoff, backoff * 2)

    def _post_once(self, batch: list[dict[str, Any]], body: bytes) -> float | None:
        """One attempt. None: done with this batch (delivered, or refused for good). A number: retry after
        at least that many seconds."""
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/x-ndjson",
                "Authorization": f"Bearer {self.token}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                answer = json.loads(resp.read() or b"{}")
                self._count(batches=1)
                self._take_answer(batch, answer)
                return None
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                answer = json.loads(raw or b"{}")
            except ValueError:
                answer = {}
            message = (answer.get("error") or {}).get("message") if isinstance(answer, dict) else None
            self.counts.last_error = f"HTTP {err.code}{': ' + message if message else ''}"
            if err.code in RETRYABLE:
                retry_after = err.headers.get("Retry-After") if err.headers else None
                return float(retry_after) if retry_after and retry_after.isdigit() else 0.0
            self._count(batches=1)
            if err.code == 400 and isinstance(answer, dict) and answer.get("rejected"):
                self._take_answer(batch, answer)
            else:
                # A token or configuration problem (401, 403, 413, 415…): resending would fail the same way.
                self._count(rejected=len(batch))
                log.error("target-health: the API refused a batch of %d events: %s", len(batch), self.counts.last_error)
            return None
        except (urllib.error.URLError, OSError, ValueError) as err:
            reason = getattr(err, "reason", err)
            self.counts.last_error = f"{type(reason).__name__}: {reason}"
            return 0.0

    def _take_answer(self, batch: list[dict[str, Any]], answer: dict[str, Any]) -> None:
        rejected = answer.get("rejected") or []
        self._count(
            sent=int(answer.get("accepted", 0)), duplicates=int(answer.get("duplicates", 0)), rejected=len(rejected)
        )
        for item in rejected:
            index = item.get("index")
            event_id = batch[index].get("eventId") if isinstance(index, int) and 0 <= index < len(batch) else None
            log.error("target-health: event %s refused: %s", event_id, "; ".join(item.get("errors") or []))
