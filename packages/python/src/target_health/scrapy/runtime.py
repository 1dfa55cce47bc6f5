"""The state the extension and the middlewares share for one crawler: settings, the controls store, the
event sender and the controls follower. One per crawler, created by whichever component Scrapy builds
first (`runtime_for(crawler)`)."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from typing import Any

from ..controls import ControlsStore
from ..follower import ControlsFollower
from ..sender import EventSender, SenderCounts

log = logging.getLogger("target_health.scrapy")
_ATTR = "_target_health_runtime"
STATS_PREFIX = "target_health"


@dataclass(frozen=True)
class Settings:
    enabled: bool
    api_url: str
    token: str
    batch_size: int
    batch_interval: float
    max_queue: int
    close_timeout: float
    controls_mode: str  # "stream" | "poll" | "off"
    controls_sites: tuple[str, ...]
    poll_interval: float
    unknown_site: str  # "allow" | "pause"
    wait_for_controls: float
    base_delay: float
    max_concurrency: int
    extraction_wait: float
    # CONCURRENT_REQUESTS_PER_IP, when set (it then replaces the per-domain limit in Scrapy's slots).
    per_ip_concurrency: int = 0

    @staticmethod
    def from_scrapy(s: Any) -> "Settings":
        """Reads the TARGET_HEALTH_* settings; a bad value is a ValueError naming the setting and the fix."""
        enabled = s.getbool("TARGET_HEALTH_ENABLED", True)
        # The settings win; without them the environment the docs set up (TH_API, TH_TOKEN), so a token
        # never has to be written into settings.py.
        api_url = (s.get("TARGET_HEALTH_API_URL") or os.environ.get("TH_API") or "").strip()
        token = (s.get("TARGET_HEALTH_TOKEN") or os.environ.get("TH_TOKEN") or "").strip()
        if enabled and not api_url:
            raise ValueError(
                "TARGET_HEALTH_API_URL: not set, and no TH_API in the environment; give the API's URL "
                "(e.g. http://127.0.0.1:8787) or set TARGET_HEALTH_ENABLED = False"
            )
        if enabled and not token:
            raise ValueError(
                "TARGET_HEALTH_TOKEN: not set, and no TH_TOKEN in the environment; "
                "create one with `target-health token create <name> --scope ingest,read`"
            )
        mode = s.get("TARGET_HEALTH_CONTROLS", "stream")
        if mode not in ("stream", "poll", "off"):
            raise ValueError(f"TARGET_HEALTH_CONTROLS: must be stream, poll or off (got {mode!r})")
        unknown = s.get("TARGET_HEALTH_UNKNOWN_SITE", "allow")
        if unknown not in ("allow", "pause"):
            raise ValueError(f"TARGET_HEALTH_UNKNOWN_SITE: must be allow or pause (got {unknown!r})")
        batch_size = s.getint("TARGET_HEALTH_BATCH_SIZE", 500)
        if not 1 <= batch_size <= 10_000:
            raise ValueError(f"TARGET_HEALTH_BATCH_SIZE: must be 1-10000 events (got {batch_size})")
        per_domain = s.getint("CONCURRENT_REQUESTS_PER_DOMAIN", 8)
        base_delay = s.get("TARGET_HEALTH_BASE_DELAY")
        return Settings(
            enabled=enabled,
            api_url=api_url,
            token=token,
            batch_size=batch_size,
            batch_interval=s.getfloat("TARGET_HEALTH_BATCH_INTERVAL", 1.0),
            max_queue=s.getint("TARGET_HEALTH_MAX_QUEUE", 100_000),
            close_timeout=s.getfloat("TARGET_HEALTH_CLOSE_TIMEOUT", 30.0),
            controls_mode=mode,
            controls_sites=tuple(s.getlist("TARGET_HEALTH_SITES", [])),
            poll_interval=s.getfloat("TARGET_HEALTH_POLL_INTERVAL", 5.0),
            unknown_site=unknown,
            wait_for_controls=s.getfloat("TARGET_HEALTH_WAIT_FOR_CONTROLS", 5.0),
            base_delay=float(base_delay) if base_delay not in (None, "") else s.getfloat("DOWNLOAD_DELAY", 0.0),
            # Controls lower concurrency; they never raise it above what the crawl itself allows.
            max_concurrency=s.getint("CONCURRENT_REQUESTS_PER_IP") or per_domain,
            extraction_wait=s.getfloat("TARGET_HEALTH_EXTRACTION_WAIT", 30.0),
            per_ip_concurrency=s.getint("CONCURRENT_REQUESTS_PER_IP"),
        )


class Runtime:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.settings = Settings.from_scrapy(crawler.settings)
        self.stats = crawler.stats
        self.store = ControlsStore()
        self.sites_seen: set[str] = set()
        # Events of responses on their way to a callback (sent with its extraction result), by eventId.
        self.pending: dict[str, tuple[dict[str, Any], float]] = {}
        self.sender: EventSender | None = None
        self.follower: ControlsFollower | None = None
        self.started = False
        if self.settings.enabled:
            self.sender = EventSender(
                self.settings.api_url,
                self.settings.token,
                batch_size=self.settings.batch_size,
                interval=self.settings.batch_interval,
                max_queue=self.settings.max_queue,
                on_counts=self._publish_counts,
            )
            if self.settings.controls_mode != "off":
                self.follower = ControlsFollower(
                    self.settings.api_url,
                    self.settings.token,
                    self.store,
                    mode=self.settings.controls_mode,
                    sites=self.settings.controls_sites,
                    poll_interval=self.settings.poll_interval,
                    sites_seen=lambda: list(self.sites_seen),
                    on_error=lambda _m: self.inc("controls/errors"),
                )

    def start(self) -> None:
        if self.started or not self.settings.enabled:
            return
        self.started = True
        assert self.sender is not None
        self.sender.start()
        if self.follower is not None:
            self.follower.start()

    def inc(self, key: str, n: int = 1) -> None:
        self.stats.inc_value(f"{STATS_PREFIX}/{key}", n)

    def _publish_counts(self, counts: SenderCounts) -> None:
        # Called on the sender thread: each key is written by that thread only (a dict store is atomic).
        for name in ("sent", "duplicates", "rejected", "dropped", "retries", "batches"):
            self.stats.set_value(f"{STATS_PREFIX}/events_{name}", getattr(counts, name))

    def hold(self, event: dict[str, Any]) -> None:
        self.pending[event["eventId"]] = (event, time.monotonic())

    def release(self, event: dict[str, Any]) -> None:
        """Sends a held event (once: the spider middleware and the sweep may both reach it)."""
        if self.pending.pop(event["eventId"], None) is not None:
            self.record(event)

    def sweep(self, older_than: float) -> int:
        """Sends held events whose response never reached a callback (dropped by another middleware)."""
        cutoff = time.monotonic() - older_than
        stale = [e for e, since in list(self.pending.values()) if since <= cutoff]
        for event in stale:
            self.release(event)
        return len(stale)

    def record(self, event: dict[str, Any]) -> None:
        if self.sender is None:
            return
        self.inc("events_recorded")
        self.sender.offer(event)


def runtime_for(crawler: Any) -> Runtime:
    runtime = getattr(crawler, _ATTR, None)
    if runtime is None:
        runtime = Runtime(crawler)
        setattr(crawler, _ATTR, runtime)
    return runtime
