"""Keeps a `ControlsStore` current from the API, in a background thread.

Mode "stream" (default): `GET /v1/controls/stream` (Server-Sent Events): a `snapshot` of every site, then
a `controls` event per change, each a whole record applied by version; on a dropped connection it
reconnects with `Last-Event-ID` (the server replays what was missed, or sends a fresh snapshot). The
server sends a heartbeat comment every 15 s, so a read that stays silent for `read_timeout` (45 s) means
a dead connection. Mode "poll" (or when the server has no stream): `GET /v1/sites/{site}/controls` with
`If-None-Match` for each site the crawl has touched.

While the API is unreachable the store keeps the last known records (the fail-safe), and the thread
retries with a back-off of 1 s doubling to 30 s.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
from typing import Callable, Iterable
from urllib.parse import quote, urlencode, urlsplit

from .controls import ControlsStore
from .sse import SseParser

log = logging.getLogger("target_health")


class NoStream(Exception):
    """The server has no controls stream (404/405): fall back to polling."""


class ControlsFollower:
    def __init__(
        self,
        api_url: str,
        token: str,
        store: ControlsStore,
        *,
        mode: str = "stream",
        sites: Iterable[str] = (),
        poll_interval: float = 5.0,
        read_timeout: float = 45.0,
        sites_seen: Callable[[], Iterable[str]] = lambda: (),
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"TARGET_HEALTH_API_URL: must be an http(s) URL like http://127.0.0.1:8787 (got {api_url!r})"
            )
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port
        self.base_path = parts.path.rstrip("/")
        self.token = token
        self.store = store
        self.mode = mode
        self.sites = list(sites)
        self.poll_interval = poll_interval
        self.read_timeout = read_timeout
        self.sites_seen = sites_seen
        self.on_error = on_error
        self.parser = SseParser()
        self.ready = threading.Event()  # set once the first snapshot (or poll round) is applied
        self.connected = False
        self._etags: dict[str, str] = {}
        self._stop = threading.Event()
        # The socket of the request in progress, kept apart from its connection: http.client lets go of
        # `conn.sock` once a response that ends with the connection (the stream) is read, so stop()
        # could not reach the read it must wake — and the close waited out the join's timeout.
        self._sock: socket.socket | None = None
        self._thread = threading.Thread(target=self._run, name="target-health-controls", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stops the thread and returns once it has ended (a read in progress is woken by shutting its
        socket down; the join's timeout is only a safety net)."""
        self._stop.set()
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked read at once
            except OSError:
                pass
        if self._thread.is_alive():
            self._thread.join(2)

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        """A connected connection whose socket stop() can reach."""
        cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        conn = cls(self.host, self.port, timeout=timeout)
        conn.connect()
        self._sock = conn.sock
        if self._stop.is_set():  # stop() ran while this one connected: it could not reach this socket
            conn.close()
            raise ConnectionError("controls follower stopped")
        return conn

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def _run(self) -> None:
        backoff = 1.0
        failing = False
        while not self._stop.is_set():
            try:
                if self.mode == "stream":
                    self._follow_stream()
                else:
                    self._poll_round()
                    self.ready.set()
                    self._stop.wait(self.poll_interval)
                if failing:
                    log.info("target-health: controls API reachable again")
                failing = False
                backoff = 1.0
            except NoStream as err:
                log.warning(
                    "target-health: %s; polling each site's controls every %.0fs instead", err, self.poll_interval
                )
                self.mode = "poll"
            except Exception as err:  # noqa: BLE001 — any failure: keep the last known controls, retry
                self.connected = False
                if self._stop.is_set():
                    return
                message = f"{type(err).__name__}: {err}"
                if self.on_error:
                    self.on_error(message)
                if not failing:
                    log.warning(
                        "target-health: controls API unreachable (%s); "
                        "keeping the last known controls of %d sites and retrying",
                        message,
                        len(self.store.sites()),
                    )
                failing = True
                self._stop.wait(backoff)
                backoff = min(30.0, backoff * 2)

    def _follow_stream(self) -> None:
        query = ("?" + urlencode([("site", s) for s in self.sites])) if self.sites else ""
        headers = {**self._headers(), "Accept": "text/event-stream"}
        if self.parser.last_event_id:
            headers["Last-Event-ID"] = self.parser.last_event_id
        conn = self._connection(self.read_timeout)
        try:
            conn.request("GET", f"{self.base_path}/v1/controls/stream{query}", headers=headers)
            resp = conn.getresponse()
            if resp.status in (404, 405):
                raise NoStream(f"the API has no controls stream (HTTP {resp.status})")
            if resp.status != 200:
                raise ConnectionError(f"controls stream answered HTTP {resp.status}: {resp.read(500)!r}")
            self.connected = True
            while not self._stop.is_set():
                raw = resp.fp.readline(1 << 24)
                if not raw:
                    raise ConnectionError("controls stream closed by the server")
                event = self.parser.feed_line(raw.decode("utf-8").rstrip("\r\n"))
                if event is not None:
                    self._take(event.event, event.data)
        finally:
            self._sock = None
            conn.close()

    def _take(self, kind: str, data: str) -> None:
        payload = json.loads(data)
        if kind == "snapshot":
            for record in payload.get("sites", []):
                self._apply(record)
            self.ready.set()
        elif kind == "controls":
            self._apply(payload)

    def _apply(self, record: dict) -> None:
        try:
            self.store.apply(record)
        except ValueError as err:
            log.error("target-health: ignoring a controls record the extension cannot read (%s)", err)

    def _poll_round(self) -> None:
        sites = list(dict.fromkeys([*self.sites, *self.sites_seen()]))
        for site in sites:
            if self._stop.is_set():
                return
            conn = self._connection(15.0)
            try:
                headers = self._headers()
                if site in self._etags:
                    headers["If-None-Match"] = self._etags[site]
                conn.request("GET", f"{self.base_path}/v1/sites/{quote(site)}/controls", headers=headers)
                resp = conn.getresponse()
                body = resp.read()
                if resp.status == 200:
                    etag = resp.getheader("ETag")
                    if etag:
                        self._etags[site] = etag
                    self._apply(json.loads(body))
                elif resp.status not in (304, 404):  # 404: no loop for the site yet; keep the defaults
                    raise ConnectionError(f"controls of {site} answered HTTP {resp.status}: {body[:300]!r}")
            finally:
                self._sock = None
                conn.close()
