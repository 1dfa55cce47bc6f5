"""The Scrapy extension: starts the event sender and the controls follower when the spider opens, waits
(briefly) for the first controls so the first requests already obey them, and on close sends what is
left — on a thread, so the reactor never blocks — and puts the final counts into Scrapy's stats."""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import task, threads

from .runtime import Runtime, Settings, runtime_for

log = logging.getLogger("target_health.scrapy")
SWEEP_EVERY_S = 5.0


def concurrency_warnings(settings: Settings) -> list[str]:
    """What in the crawl's own settings keeps the controls from taking effect (said once, at open)."""
    if settings.controls_mode == "off" or settings.max_concurrency > 1:
        return []
    source = "CONCURRENT_REQUESTS_PER_IP" if settings.per_ip_concurrency else "CONCURRENT_REQUESTS_PER_DOMAIN"
    return [
        f"{source} = {settings.max_concurrency}: the controls' concurrencyLimit only lowers a site's concurrency, "
        f"so it can never take effect here (pause, canary-only, stop and the pace still do); set {source} to the "
        "most a site may get (Scrapy's project template sets 1; e.g. 8) and let Target Health lower it"
    ]


class TargetHealthExtension:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self._sweeper: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "TargetHealthExtension":
        try:
            runtime = runtime_for(crawler)
        except ValueError as err:
            # A setting is wrong: one line naming it, not a stack trace.
            raise NotConfigured(str(err)) from None
        if not runtime.settings.enabled:
            raise NotConfigured("TARGET_HEALTH_ENABLED is False")
        ext = cls(runtime)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    async def spider_opened(self, spider: Any) -> None:
        self.rt.start()
        self._sweeper = task.LoopingCall(self.rt.sweep, self.rt.settings.extraction_wait)
        self._sweeper.start(SWEEP_EVERY_S, now=False)
        follower = self.rt.follower
        wait = self.rt.settings.wait_for_controls
        log.info(
            "target-health: recording to %s; controls: %s", self.rt.settings.api_url, self.rt.settings.controls_mode
        )
        for warning in concurrency_warnings(self.rt.settings):
            log.warning("target-health: %s", warning)
        if follower is None or wait <= 0:
            return

        def wait_ready() -> None:
            started = time.monotonic()
            if follower.ready.wait(wait):
                log.info(
                    "target-health: controls of %d sites known after %.2fs",
                    len(self.rt.store.sites()),
                    time.monotonic() - started,
                )
            else:
                log.warning(
                    "target-health: no controls from the API after %.0fs; "
                    "crawling with %s for unknown sites until they arrive",
                    wait,
                    self.rt.settings.unknown_site,
                )

        # Awaited by the engine: the crawl starts once the first controls are known (or the wait ends).
        await maybe_deferred_to_future(threads.deferToThread(wait_ready))

    async def spider_closed(self, spider: Any, reason: str) -> None:
        if self._sweeper is not None and self._sweeper.running:
            self._sweeper.stop()
        self.rt.sweep(0)  # whatever is still waiting for a callback goes now
        follower, sender = self.rt.follower, self.rt.sender

        def close() -> None:
            if follower is not None:
                follower.stop()
            if sender is not None:
                counts = sender.close(self.rt.settings.close_timeout)
                log.info(
                    "target-health: events sent %d (duplicates %d), rejected %d, dropped %d",
                    counts.sent,
                    counts.duplicates,
                    counts.rejected,
                    counts.dropped,
                )

        # Blocking work on a thread: the reactor keeps running while the last batches go out.
        await maybe_deferred_to_future(threads.deferToThread(close))
