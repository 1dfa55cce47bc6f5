"""`TargetHealth`: the crawlee-python integration's entry point.

th = TargetHealth()                                   # TH_API, TH_TOKEN from the environment
crawler = ParselCrawler(request_manager=th.request_manager())
th.attach(crawler)                                    # hooks and error handlers
async with th:                                        # sender and controls follower; waits for the controls
    await crawler.run(urls)                           # the exit sends what is left
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable, Mapping

from .. import events as ev
from ..controls import ControlsStore
from ..follower import ControlsFollower
from ..sender import EventSender, SenderCounts
from ._attempts import Attempts
from ._gate import ControlledRequestManager

if TYPE_CHECKING:
    from types import TracebackType

    from crawlee import Request
    from crawlee.crawlers import BasicCrawler, BasicCrawlingContext
    from crawlee.request_loaders import RequestManager

log = logging.getLogger("target_health.crawlee")

ErrorHandler = Callable[[Any, Exception], Awaitable[Any]]


class TargetHealth:
    """Records every attempt of the crawlers it is attached to and makes them obey each site's controls.

    `api_url`, `token`: the API and a token with the scopes ingest,read (default: TH_API, TH_TOKEN).
    `controls`: "stream" (the SSE stream), "poll" or "off". `unknown_site`: "allow" (crawl a site the API
    has no controls for) or "pause" (hold its requests until controls arrive). `wait_for_controls`: how
    long entering waits for the first controls. `page_type` / `route`: callables `request → …` that
    override the label / the route read from the proxy.
    """

    def __init__(
        self,
        api_url: str | None = None,
        token: str | None = None,
        *,
        controls: str = "stream",
        sites: Iterable[str] = (),
        unknown_site: str = "allow",
        wait_for_controls: float = 5.0,
        max_concurrency: int | None = None,
        batch_size: int = 500,
        batch_interval: float = 1.0,
        max_queue: int = 100_000,
        close_timeout: float = 30.0,
        poll_interval: float = 5.0,
        page_type: Callable[[Request], str | None] | None = None,
        route: Callable[[Request], Mapping[str, Any] | None] | None = None,
    ) -> None:
        # The arguments win; without them the environment the docs set up, so no token is written in code.
        self.api_url = (api_url or os.environ.get("TH_API") or "").strip()
        self.token = (token or os.environ.get("TH_TOKEN") or "").strip()
        if not self.api_url:
            raise ValueError(
                "api_url: not given, and no TH_API in the environment; give the API's URL (e.g. http://127.0.0.1:8787)"
            )
        if not self.token:
            raise ValueError(
                "token: not given, and no TH_TOKEN in the environment; "
                "create one with `target-health token create <name> --scope ingest,read`"
            )
        if controls not in ("stream", "poll", "off"):
            raise ValueError(f"controls: must be stream, poll or off (got {controls!r})")
        if unknown_site not in ("allow", "pause"):
            raise ValueError(f"unknown_site: must be allow or pause (got {unknown_site!r})")
        if not 1 <= batch_size <= 10_000:
            raise ValueError(f"batch_size: must be 1-10000 events (got {batch_size})")
        self.unknown_site = unknown_site
        self.wait_for_controls = wait_for_controls
        self.max_concurrency = max_concurrency
        self.close_timeout = close_timeout
        self.counts: dict[str, int] = {}
        self.store = ControlsStore()
        self.sites_seen: set[str] = set()
        self.sender = EventSender(
            self.api_url,
            self.token,
            batch_size=batch_size,
            interval=batch_interval,
            max_queue=max_queue,
            on_counts=self._take_counts,
        )
        self.follower = (
            None
            if controls == "off"
            else ControlsFollower(
                self.api_url,
                self.token,
                self.store,
                mode=controls,
                sites=sites,
                poll_interval=poll_interval,
                sites_seen=lambda: list(self.sites_seen),
                on_error=lambda _m: self.count("controls_errors"),
            )
        )
        self.attempts = Attempts(self._record, page_type=page_type, route=route)
        self._managers: list[ControlledRequestManager] = []
        self._started = False

    # --- counts ---------------------------------------------------------------------------------

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def _take_counts(self, counts: SenderCounts) -> None:
        # On the sender thread: each key is written by that thread only (a dict store is atomic).
        for name in ("sent", "duplicates", "rejected", "dropped", "retries", "batches"):
            self.counts[f"events_{name}"] = getattr(counts, name)

    def _record(self, event: dict[str, Any]) -> None:
        self.count("events_recorded")
        self.sender.offer(event)

    # --- wiring -------------------------------------------------------------------------------------

    def request_manager(self, inner: RequestManager | None = None) -> ControlledRequestManager:
        """The request manager to give the crawler (`request_manager=`): `inner` (default: the default
        RequestQueue, opened when first used) behind the controls' gate."""
        manager = ControlledRequestManager(
            self.store,
            inner=inner,
            unknown_site=self.unknown_site,
            max_concurrency=self.max_concurrency,
            on_end=self.attempts.end,
            count=self.count,
            on_site=self.sites_seen.add,
        )
        self._managers.append(manager)
        return manager

    def attach(self, crawler: BasicCrawler[Any]) -> None:
        """Adds the navigation hooks that record each attempt and error handlers that record network
        errors; an error_handler or failed_request_handler registered before is still called (register
        yours before attach)."""
        manager = getattr(crawler, "_request_manager", None)
        if not isinstance(manager, ControlledRequestManager) or manager not in self._managers:
            raise ValueError(
                "attach: the crawler's request manager is not this TargetHealth's; create the crawler with "
                "request_manager=th.request_manager() (pass your own queue as its argument)"
            )
        pre = getattr(crawler, "pre_navigation_hook", None)
        post = getattr(crawler, "post_navigation_hook", None)
        if pre is None or post is None:
            raise ValueError(
                f"attach: {type(crawler).__name__} has no pre/post navigation hooks; use an HTTP crawler "
                "(ParselCrawler, BeautifulSoupCrawler, HttpCrawler) of crawlee 1.10.1 or newer"
            )
        pre(self.attempts.before_navigation)
        post(self.attempts.after_navigation)
        crawler.error_handler(self._chain(getattr(crawler, "_error_handler", None)))
        crawler.failed_request_handler(self._chain(getattr(crawler, "_failed_request_handler", None)))

    def _chain(self, theirs: ErrorHandler | None) -> ErrorHandler:
        async def handler(context: BasicCrawlingContext, error: Exception) -> Any:
            self.attempts.failed(context.request, error)
            return await theirs(context, error) if theirs is not None else None

        return handler

    def extraction(
        self,
        context: BasicCrawlingContext,
        result: str = "ok",
        valid_records: int | None = None,
        missing_fields: list[str] | None = None,
    ) -> None:
        """Reports what the request handler extracted (sent with the page's event):

        th.extraction(context, result="ok", valid_records=len(items))
        th.extraction(context, result="missing_fields", missing_fields=["price"])
        """
        self.attempts.extraction(context.request, ev.extraction_record(result, valid_records, missing_fields))

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Starts the sender and the controls follower and waits (at most `wait_for_controls` s) for the
        first controls, so the crawl's first requests already obey them."""
        if self._started:
            return
        self._started = True
        self.sender.start()
        if self.follower is None:
            return
        self.follower.start()
        started = time.monotonic()
        if await asyncio.to_thread(self.follower.ready.wait, self.wait_for_controls):
            log.info(
                "target-health: controls of %d sites known after %.2fs",
                len(self.store.sites()),
                time.monotonic() - started,
            )
        else:
            log.warning(
                "target-health: no controls from the API after %.0fs; "
                "crawling with %s for unknown sites until they arrive",
                self.wait_for_controls,
                self.unknown_site,
            )

    async def close(self) -> SenderCounts:
        """Sends what is left (at most `close_timeout` s) and stops the follower; on a thread, so the
        event loop keeps running meanwhile."""
        self.attempts.close()
        if self.follower is not None:
            await asyncio.to_thread(self.follower.stop)
        counts = await asyncio.to_thread(self.sender.close, self.close_timeout)
        log.info(
            "target-health: events sent %d (duplicates %d), rejected %d, dropped %d",
            counts.sent,
            counts.duplicates,
            counts.rejected,
            counts.dropped,
        )
        return counts

    async def __aenter__(self) -> TargetHealth:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()
