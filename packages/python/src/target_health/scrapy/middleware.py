"""The downloader middleware (records each attempt's outcome, obeys the controls) and the spider
middleware (sends a page's event once its callback has run, with the extraction result it reported).

Place the downloader middleware close to the downloader (950, after HttpProxyMiddleware at 750 and
RetryMiddleware at 550): it then sees every attempt — each retry and each redirect hop is its own event.

Nothing here imports `twisted.internet.reactor` at import time: Scrapy imports spider modules (which
import this package, for `extraction`) before it installs the reactor its settings ask for, and importing
the reactor module installs Twisted's default one — `scrapy crawl` would then refuse to start ("The
installed reactor … does not match the requested one"). The reactor is looked up when first used.
"""

from __future__ import annotations

import logging
import time
from typing import Any, AsyncIterator, Iterable

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from .. import events as ev
from ..controls import SiteControls, slot_settings, verdict
from ..pages import PageTypeMemory
from .runtime import Runtime, runtime_for
from .signals import controls_changed

log = logging.getLogger("target_health.scrapy")

SOURCE = "scrapy"  # the events' id prefix
META_EVENT = "_target_health_event"  # the attempt's event, until it is sent
META_START = "_target_health_start"
META_IN_FLIGHT = "_target_health_in_flight"  # the site this attempt holds a concurrency place of
# A waiting request is woken by a change of its site's controls or a finished request of that site;
# this is only the safety net.
WAKE_EVERY_S = 1.0


def _reactor() -> Any:
    """The running reactor, imported when needed (never at import time: see the module's docstring)."""
    from twisted.internet import reactor

    return reactor


class PausedOnDeparture(Exception):
    """Raised in front of the download handler for an admitted request whose site was paused while it
    waited in Scrapy's slot queue: the middleware's process_exception hands it back to the scheduler."""

    def __init__(self, site: str) -> None:
        super().__init__(
            f"target-health: {site} was paused while the request waited for its slot; "
            "handed back to the scheduler, not sent"
        )
        self.site = site


class PageTypes:
    """The page type of each attempt: `meta["target_health_page_type"]`, else `TARGET_HEALTH_PAGE_TYPE`
    (a callable `request → str | None`), else the callback's name — except for canaries, which take the
    page type last recorded for their URL (target_health.pages)."""

    def __init__(self, resolver: Any = None) -> None:
        self.resolver = resolver if callable(resolver) else None
        self.memory = PageTypeMemory(f"meta[{ev.META_PAGE_TYPE!r}]")

    def of(self, request: Any, site: str) -> str | None:
        explicit = request.meta.get(ev.META_PAGE_TYPE)
        if not explicit and self.resolver is not None:
            explicit = self.resolver(request)
        callback = request.callback
        return self.memory.of(
            url=request.url,
            site=site,
            canary=bool(request.meta.get(ev.META_CANARY)),
            explicit=str(explicit) if explicit else None,
            fallback=getattr(callback, "__name__", None) if callback is not None else None,
        )


# Routes of the proxies seen (a crawl uses a handful): parsing the URL and its credentials once each.
_proxy_routes: dict[tuple[Any, Any], dict[str, str]] = {}
PROXY_ROUTES_REMEMBERED = 1_000


def _route(request: Any, runtime: Runtime) -> dict[str, Any]:
    explicit = request.meta.get(ev.META_ROUTE)
    if isinstance(explicit, dict):
        return explicit
    resolver = runtime.crawler.settings.get("TARGET_HEALTH_ROUTE")
    if callable(resolver):
        return resolver(request) or {}
    proxy = request.meta.get("proxy")
    if not proxy:
        return {}
    key = (proxy, request.headers.get("Proxy-Authorization"))
    route = _proxy_routes.get(key)
    if route is None:
        if len(_proxy_routes) >= PROXY_ROUTES_REMEMBERED:
            _proxy_routes.clear()
        route = _proxy_routes[key] = ev.route_from_proxy(proxy, ev.proxy_user(key[1]))
    return route


class TargetHealthDownloaderMiddleware:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        # Slot keys seen per site (DOWNLOAD_SLOT in meta can make them differ from the host).
        self.slot_keys: dict[str, set[str]] = {}
        # Requests in flight per site, and the requests waiting for a place or a resume. The extension
        # enforces concurrencyLimit itself: Scrapy 2.19's slot concurrency is not enough on its own (with
        # the asyncio reactor, _process_queue starts every queued request of a slot before the first is
        # counted as transferring, so a burst of queued requests all go out at once).
        self.in_flight: dict[str, int] = {}
        self.waiters: dict[str, list[Deferred]] = {}
        # Sites whose requests are being held now (logged once when the holding starts, once when it ends).
        self.holding: set[str] = set()
        self.page_types = PageTypes(runtime.crawler.settings.get("TARGET_HEALTH_PAGE_TYPE"))
        # Whether Scrapy's DownloaderStats counts a request before this middleware sees it (found when the
        # engine starts): a request handed back unsent is then taken out of downloader/request_count.
        self.counted_before_us = False
        if runtime.settings.enabled:
            runtime.store.on_change(lambda c: _reactor().callFromThread(self.changed, c))

    @classmethod
    def from_crawler(cls, crawler: Any) -> "TargetHealthDownloaderMiddleware":
        try:
            mw = cls(runtime_for(crawler))
        except ValueError as err:
            raise NotConfigured(str(err)) from None
        if mw.rt.settings.enabled:
            crawler.signals.connect(mw.engine_started, signal=signals.engine_started)
        return mw

    # --- the departure check ---------------------------------------------------------------------

    def engine_started(self) -> None:
        self._find_downloader_stats()
        self._wrap_download_handlers()

    def _find_downloader_stats(self) -> None:
        downloader = getattr(getattr(self.rt.crawler, "engine", None), "downloader", None)
        chain = list(getattr(getattr(downloader, "middleware", None), "middlewares", ()) or ())
        stats_at = next((i for i, mw in enumerate(chain) if type(mw).__name__ == "DownloaderStats"), None)
        ours_at = next((i for i, mw in enumerate(chain) if mw is self), None)
        self.counted_before_us = stats_at is not None and ours_at is not None and stats_at < ours_at

    def _uncount(self, request: Any) -> None:
        """Takes an attempt that was never sent back out of Scrapy's downloader stats, which counted it on
        its way in (DownloaderStats.process_request, 850, runs before this middleware, 950)."""
        if not self.counted_before_us:
            return
        from scrapy.utils.request import request_httprepr

        stats = self.rt.crawler.stats
        stats.inc_value("downloader/request_count", -1)
        stats.inc_value(f"downloader/request_method_count/{request.method}", -1)
        stats.inc_value("downloader/request_bytes", -len(request_httprepr(request)))

    def _wrap_download_handlers(self) -> None:
        """Puts the departure check in front of the download handlers. process_request admits a request
        before Scrapy's slot queue, where it may wait out the slot's delay (DOWNLOAD_DELAY × the revisit
        multiplier, per request ahead of it) — a pause arriving meanwhile would not stop it. The handlers
        are what the downloader calls once the slot lets a request go, so the site's controls are read
        there once more, the last moment before anything is sent."""
        downloader = getattr(getattr(self.rt.crawler, "engine", None), "downloader", None)
        handlers = getattr(downloader, "handlers", None)
        download_async = getattr(handlers, "download_request_async", None)
        if download_async is not None:

            async def download_request_async(request: Any) -> Any:
                self._depart(request)
                return await download_async(request)

            handlers.download_request_async = download_request_async  # type: ignore[union-attr]
            return
        download = getattr(handlers, "download_request", None)
        if download is None:
            log.warning(
                "target-health: this Scrapy's Downloader.handlers has no download_request: "
                "a pause reaches only the requests not yet admitted"
            )
            return

        # Scrapy 2.13: the downloader calls handlers.download_request(request, spider) and turns what it
        # raises into a failed Deferred, as the async one does.
        def download_request(request: Any, spider: Any) -> Any:
            self._depart(request)
            return download(request, spider)

        handlers.download_request = download_request  # type: ignore[union-attr]

    def _depart(self, request: Any) -> None:
        """An admitted request leaving Scrapy's slot queue: a stop drops it, a pause hands it back (see
        process_exception); a canary on a canary-only site goes."""
        site = request.meta.get(META_IN_FLIGHT)
        if site is None:  # not admitted by this middleware (disabled, or a request it never saw)
            return
        decision = verdict(
            self.rt.store.get(site),
            canary=bool(request.meta.get(ev.META_CANARY)),
            unknown_site=self.rt.settings.unknown_site,
        )
        if decision == "drop":
            self.rt.inc("requests_dropped_stopped")
            controls = self.rt.store.get(site)
            raise IgnoreRequest(
                f"target-health: {site} is stopped ({controls.reason if controls else 'band stopped'}); request dropped"
            )
        if decision == "hold":
            raise PausedOnDeparture(site)

    # --- controls ------------------------------------------------------------------------------

    def changed(self, controls: SiteControls) -> None:
        """A site's controls changed (on the reactor thread): obey them, then tell whoever listens."""
        self.apply_to_slots(controls)
        self.rt.inc("controls_changes")
        self.rt.crawler.signals.send_catch_log(signal=controls_changed, controls=controls)

    def apply_to_slots(self, controls: SiteControls) -> None:
        """Sets the site's slot concurrency and delay, for its existing slots and the ones Scrapy creates
        later (per_slot_settings is what the downloader reads when it makes a slot)."""
        self._wake(controls.site)
        engine = getattr(self.rt.crawler, "engine", None)
        downloader = getattr(engine, "downloader", None)
        if downloader is None:
            return
        concurrency, delay = slot_settings(controls, self.rt.settings.base_delay)
        concurrency = min(concurrency, self.rt.settings.max_concurrency)
        for key in self.slot_keys.get(controls.site, {controls.site}):
            downloader.per_slot_settings[key] = {
                **downloader.per_slot_settings.get(key, {}),
                "concurrency": concurrency,
                "delay": delay,
            }
            slot = downloader.slots.get(key)
            log.debug(
                "target-health: %s (slot %s): concurrency %d, delay %.2fs (controls v%d, %s)",
                controls.site,
                key,
                concurrency,
                delay,
                controls.version,
                "live slot" if slot is not None else "future slot",
            )
            if slot is not None and (slot.concurrency != concurrency or slot.delay != delay):
                slot.concurrency = concurrency
                slot.delay = delay
                self.rt.crawler.stats.set_value(f"target_health/slot_concurrency/{controls.site}", concurrency)

    def _wake(self, site: str) -> None:
        for d in self.waiters.pop(site, []):
            if not d.called:
                d.callback(None)

    async def _wait(self, site: str) -> None:
        d: Deferred = Deferred()
        self.waiters.setdefault(site, []).append(d)
        timer = _reactor().callLater(WAKE_EVERY_S, lambda: None if d.called else d.callback(None))
        await maybe_deferred_to_future(d)
        if timer.active():
            timer.cancel()

    def _limit(self, site: str) -> int | None:
        controls = self.rt.store.get(site)
        return None if controls is None else min(controls.concurrency_limit, self.rt.settings.max_concurrency)

    def _closing(self) -> bool:
        """Whether the crawl is shutting down (the engine stopped, or the spider is being closed)."""
        engine = getattr(self.rt.crawler, "engine", None)
        if engine is None:
            return False
        slot = getattr(engine, "_slot", None)  # Scrapy has no public "closing" flag; the engine's slot holds it
        return not engine.running or (slot is not None and getattr(slot, "closing", None) is not None)

    def _give_back(self, request: Any, site: str) -> None:
        """A held request at shutdown: Scrapy waits for every request in the downloader before it closes,
        so holding on would hang the shutdown until the site is resumed. The request goes back to the
        scheduler (kept on disk with JOBDIR, like any request still scheduled; discarded without it) and
        this attempt ends with IgnoreRequest — it never reached the site."""
        rt = self.rt
        rt.inc("requests_held_now", -1)
        rt.inc("requests_given_back_at_close")
        self._uncount(request)
        engine = getattr(rt.crawler, "engine", None)
        try:
            if engine is not None:
                engine.crawl(request.replace(dont_filter=True))
        except Exception as err:  # the scheduler may already be gone: the request is then lost with it
            log.warning("target-health: could not hand %s back to the scheduler at close: %s", request.url, err)
        raise IgnoreRequest(
            f"target-health: {site} is paused and the crawl is closing; request handed back to the scheduler"
        )

    def _leave(self, request: Any) -> str:
        """Frees the attempt's concurrency place; the attempt's site."""
        site = request.meta.pop(META_IN_FLIGHT, None)
        if site is not None:
            self.in_flight[site] = max(0, self.in_flight.get(site, 0) - 1)
            self._wake(site)
            return site
        return ev.site_of(request.url)

    async def process_request(self, request: Any, spider: Any = None) -> None:
        rt = self.rt
        if not rt.settings.enabled:
            return None
        request.meta.pop(META_EVENT, None)  # a retry or redirect copies meta: each attempt is new
        request.meta.pop(META_IN_FLIGHT, None)  # a copied mark is not this attempt's place
        site = ev.site_of(request.url)
        rt.sites_seen.add(site)
        engine = getattr(rt.crawler, "engine", None)
        if engine is not None:
            key = engine.downloader.get_slot_key(request)
            keys = self.slot_keys.setdefault(site, set())
            if key not in keys:
                keys.add(key)
                known = rt.store.get(site)
                if known is not None:
                    self.apply_to_slots(known)
        canary = bool(request.meta.get(ev.META_CANARY))
        held_since: float | None = None
        while True:
            decision = verdict(rt.store.get(site), canary=canary, unknown_site=rt.settings.unknown_site)
            if decision == "drop":
                rt.inc("requests_dropped_stopped")
                if held_since is not None:  # held while paused, then stopped: no longer held
                    rt.inc("requests_held_now", -1)
                    self.holding.discard(site)
                controls = rt.store.get(site)
                raise IgnoreRequest(
                    f"target-health: {site} is stopped "
                    f"({controls.reason if controls else 'band stopped'}); request dropped"
                )
            if decision == "go":
                limit = self._limit(site)
                if limit is None or self.in_flight.get(site, 0) < limit:
                    break
                await self._wait(site)  # the site has its concurrencyLimit of requests in flight
                continue
            if held_since is None:
                held_since = time.monotonic()
                rt.inc("requests_held")
                rt.inc("requests_held_now")
                if site not in self.holding:
                    self.holding.add(site)
                    controls = rt.store.get(site)
                    log.info(
                        "target-health: holding the requests of %s until it is resumed (%s)",
                        site,
                        controls.reason if controls else "no controls yet",
                    )
            if self._closing():
                self._give_back(request, site)
            # Not dropped, not failed: the request waits here until the site is resumed (or stopped).
            await self._wait(site)
        if held_since is not None:
            rt.inc("requests_held_now", -1)
            rt.inc("requests_released")
            if site in self.holding:
                self.holding.discard(site)
                log.info("target-health: %s may be crawled again; releasing its held requests", site)
        request.meta[META_START] = time.monotonic()
        request.meta[META_IN_FLIGHT] = site
        self.in_flight[site] = self.in_flight.get(site, 0) + 1
        return None

    # --- outcomes ------------------------------------------------------------------------------

    def _latency_ms(self, request: Any) -> float:
        latency = request.meta.get("download_latency")
        if isinstance(latency, (int, float)):
            return float(latency) * 1000.0
        start = request.meta.get(META_START)
        return (time.monotonic() - start) * 1000.0 if isinstance(start, float) else 0.0

    def _waits_for_callback(self, request: Any, response: Any) -> bool:
        """Whether the response will reach the spider's callback (HttpErrorMiddleware lets it through),
        so its event waits for the extraction result; other responses are sent at once."""
        status = response.status
        if 200 <= status < 300 or request.meta.get("handle_httpstatus_all"):
            return True
        allowed = request.meta.get("handle_httpstatus_list")
        if allowed is None:
            spider = getattr(self.rt.crawler, "spider", None)
            allowed = list(getattr(spider, "handle_httpstatus_list", []) or []) + list(
                self.rt.crawler.settings.getlist("HTTPERROR_ALLOWED_CODES")
            )
        return status in allowed or self.rt.crawler.settings.getbool("HTTPERROR_ALLOW_ALL")

    def process_response(self, request: Any, response: Any, spider: Any = None) -> Any:
        rt = self.rt
        site = self._leave(request)
        if not rt.settings.enabled:
            return response
        event = ev.response_event(
            source=SOURCE,
            url=request.url,
            route=_route(request, rt),
            latency_ms=self._latency_ms(request),
            canary=bool(request.meta.get(ev.META_CANARY)),
            retries=request.meta.get("retry_times"),
            page_type=self.page_types.of(request, site),
            status=response.status,
            body=response.body,
            encoding=None,
            header_list=response.headers.getlist,
            # A TextResponse's text: decoded once, for the spider (cached) and for the sample.
            text=response.text if isinstance(response, TextResponse) else None,
        )
        if self._waits_for_callback(request, response):
            rt.hold(event)
            request.meta[META_EVENT] = event
        else:
            rt.record(event)
        return response

    def process_exception(self, request: Any, exception: BaseException, spider: Any = None) -> Any:
        rt = self.rt
        site = self._leave(request)
        if isinstance(exception, PausedOnDeparture):
            # Nothing was sent: no event. Back to the scheduler (past the dupefilter: it was seen already),
            # from where process_request holds it until the site is resumed, as any request of a paused site.
            rt.inc("requests_paused_on_departure")
            self._uncount(request)
            log.debug("%s", exception)
            return request.replace(dont_filter=True)
        if not rt.settings.enabled or isinstance(exception, IgnoreRequest):
            return None
        rt.record(
            ev.exception_event(
                source=SOURCE,
                url=request.url,
                route=_route(request, rt),
                latency_ms=self._latency_ms(request),
                canary=bool(request.meta.get(ev.META_CANARY)),
                retries=request.meta.get("retry_times"),
                page_type=self.page_types.of(request, site),
                exc=exception,
            )
        )
        return None


def extraction(
    response: Any, result: str = "ok", valid_records: int | None = None, missing_fields: list[str] | None = None
) -> None:
    """Reports what the callback extracted from `response` (sent with the page's event):

        target_health.scrapy.extraction(response, result="ok", valid_records=len(items))
        target_health.scrapy.extraction(response, result="missing_fields", missing_fields=["price"])

    A wrong value raises ValueError naming it. Without the extension (or for a response whose event is
    already sent) it does nothing.
    """
    record = ev.extraction_record(result, valid_records, missing_fields)
    event = response.meta.get(META_EVENT) if hasattr(response, "meta") else None
    if isinstance(event, dict):
        event["extraction"] = record


class TargetHealthSpiderMiddleware:
    """Sends a page's event after its callback has produced all its output (or failed), so the event
    carries the extraction result the callback reported."""

    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    @classmethod
    def from_crawler(cls, crawler: Any) -> "TargetHealthSpiderMiddleware":
        try:
            return cls(runtime_for(crawler))
        except ValueError as err:
            raise NotConfigured(str(err)) from None

    def _release(self, response: Any) -> None:
        event = response.meta.pop(META_EVENT, None) if hasattr(response, "meta") else None
        if isinstance(event, dict):
            self.rt.release(event)

    def process_spider_output(self, response: Any, result: Iterable[Any], spider: Any = None) -> Iterable[Any]:
        try:
            yield from result
        finally:
            self._release(response)

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        try:
            async for item in result:
                yield item
        finally:
            self._release(response)

    def process_spider_exception(self, response: Any, exception: BaseException, spider: Any = None) -> None:
        self._release(response)
        return None
