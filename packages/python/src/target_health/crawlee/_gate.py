"""A request manager that makes crawlee-python obey each site's controls where it takes its next request.

Crawlee asks its request manager for the next request when a task slot is free, and has it mark the
request handled (or reclaim it for a retry) when the attempt ends. Wrapping that manager is the one place
that sees both ends of every attempt in every crawler class, so:

- a paused (or canary-only) site's production requests are taken from the queue and held here, in
  memory and still "in progress" for the wrapped queue — deferred, not dropped, not failed, and the crawl
  does not end while they wait; canaries go;
- a site with `concurrencyLimit` requests in flight (taken and not yet handled) has its next ones held
  until one ends;
- a stopped site's requests are marked handled without being sent.

`is_empty()` leaves the held requests out, so Crawlee's pool does not keep starting tasks that find
nothing to run; `is_finished()` counts them, so the crawl idles until the site is resumed.
"""

from __future__ import annotations

import logging
from collections import deque
from datetime import timedelta
from typing import TYPE_CHECKING, Callable

from crawlee.request_loaders import RequestManager
from crawlee.storages import RequestQueue

from .. import events as ev
from ..controls import ControlsStore, Verdict, verdict

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crawlee import Request
    from crawlee.storage_clients.models import ProcessedRequest

log = logging.getLogger("target_health.crawlee")

# How many requests one fetch may take from the wrapped queue and hold before it gives the slot back.
MAX_TAKEN_PER_FETCH = 1_000


class ControlledRequestManager(RequestManager):
    def __init__(
        self,
        store: ControlsStore,
        *,
        inner: RequestManager | None = None,
        unknown_site: str = "allow",
        max_concurrency: int | None = None,
        on_end: Callable[[Request], None] = lambda _r: None,
        count: Callable[[str, int], None] = lambda _k, _n: None,
        on_site: Callable[[str], None] = lambda _s: None,
    ) -> None:
        self._inner = inner
        self._store = store
        self._unknown_site = unknown_site
        self._max_concurrency = max_concurrency
        self._on_end = on_end
        self._count = count
        self._on_site = on_site  # the sites seen, for the controls follower's polling mode
        self._held: dict[str, deque[Request]] = {}
        self._in_flight: dict[str, int] = {}
        self._admitted: set[str] = set()  # unique keys taken and let go, until handled or reclaimed
        self._holding: set[str] = set()  # sites whose holding was logged

    async def _queue(self) -> RequestManager:
        # The default queue is opened when first needed, as the crawler itself would open it.
        if self._inner is None:
            self._inner = await RequestQueue.open()
        return self._inner

    @property
    def held(self) -> int:
        return sum(len(q) for q in self._held.values())

    def site_in_flight(self, site: str) -> int:
        return self._in_flight.get(site, 0)

    # --- what a request may do now --------------------------------------------------------------

    def _decide(self, request: Request) -> Verdict:
        site = ev.site_of(request.url)
        self._on_site(site)
        decision = verdict(
            self._store.get(site), canary=bool(request.user_data.get(ev.META_CANARY)), unknown_site=self._unknown_site
        )
        if decision == "go":
            limit = self._limit(site)
            if limit is not None and self._in_flight.get(site, 0) >= limit:
                return "hold"
        return decision

    def _limit(self, site: str) -> int | None:
        controls = self._store.get(site)
        if controls is None:
            return None
        return (
            controls.concurrency_limit
            if self._max_concurrency is None
            else min(controls.concurrency_limit, self._max_concurrency)
        )

    def _admit(self, request: Request) -> Request:
        site = ev.site_of(request.url)
        self._in_flight[site] = self._in_flight.get(site, 0) + 1
        self._admitted.add(request.unique_key)
        if site in self._holding and not self._held.get(site):
            self._holding.discard(site)
            log.info("target-health: %s may be crawled again; its held requests are released", site)
        return request

    def _hold(self, request: Request) -> None:
        site = ev.site_of(request.url)
        self._held.setdefault(site, deque()).append(request)
        self._count("requests_held", 1)
        controls = self._store.get(site)
        if controls is not None and (controls.paused or controls.canary_only) and site not in self._holding:
            self._holding.add(site)
            log.info("target-health: holding the requests of %s until it is resumed (%s)", site, controls.reason)

    async def _drop(self, request: Request) -> None:
        """A stopped site: the request is done without being sent (not a failure, no retry)."""
        self._count("requests_dropped_stopped", 1)
        await (await self._queue()).mark_request_as_handled(request)

    async def _from_held(self) -> Request | None:
        """The first held request that may go now; held requests of a stopped site are dropped on the way."""
        for site, queue in list(self._held.items()):
            while queue:
                decision = self._decide(queue[0])
                if decision == "hold":
                    break
                request = queue.popleft()
                if not queue:
                    del self._held[site]
                if decision == "drop":
                    await self._drop(request)
                    continue
                self._count("requests_released", 1)
                return self._admit(request)
        return None

    def _any_held_movable(self) -> bool:
        return any(queue and self._decide(queue[0]) != "hold" for queue in self._held.values())

    # --- RequestManager ------------------------------------------------------------------------

    async def fetch_next_request(self) -> Request | None:
        released = await self._from_held()
        if released is not None:
            return released
        queue = await self._queue()
        for _ in range(MAX_TAKEN_PER_FETCH):
            request = await queue.fetch_next_request()
            if request is None:
                return None
            decision = self._decide(request)
            if decision == "go":
                return self._admit(request)
            if decision == "drop":
                await self._drop(request)
            else:
                self._hold(request)
        return None

    async def is_empty(self) -> bool:
        if self._any_held_movable():
            return False
        queue = await self._queue()
        if not self._held:
            return await queue.is_empty()
        # The wrapped queue counts the held requests as in progress; what else it has is what is left.
        left = await queue.get_total_count() - await queue.get_handled_count() - self.held
        return left <= 0

    async def is_finished(self) -> bool:
        return not self._held and await (await self._queue()).is_finished()

    def _end(self, request: Request) -> None:
        if request.unique_key in self._admitted:
            self._admitted.discard(request.unique_key)
            site = ev.site_of(request.url)
            self._in_flight[site] = max(0, self._in_flight.get(site, 0) - 1)
        self._on_end(request)

    async def mark_request_as_handled(self, request: Request) -> ProcessedRequest | None:
        self._end(request)
        return await (await self._queue()).mark_request_as_handled(request)

    async def reclaim_request(self, request: Request, *, forefront: bool = False) -> ProcessedRequest | None:
        self._end(request)
        return await (await self._queue()).reclaim_request(request, forefront=forefront)

    async def add_request(self, request: str | Request, *, forefront: bool = False) -> ProcessedRequest | None:
        return await (await self._queue()).add_request(request, forefront=forefront)

    async def add_requests(
        self,
        requests: Sequence[str | Request],
        *,
        forefront: bool = False,
        batch_size: int = 1000,
        wait_time_between_batches: timedelta = timedelta(seconds=1),
        wait_for_all_requests_to_be_added: bool = False,
        wait_for_all_requests_to_be_added_timeout: timedelta | None = None,
    ) -> None:
        await (await self._queue()).add_requests(
            requests,
            forefront=forefront,
            batch_size=batch_size,
            wait_time_between_batches=wait_time_between_batches,
            wait_for_all_requests_to_be_added=wait_for_all_requests_to_be_added,
            wait_for_all_requests_to_be_added_timeout=wait_for_all_requests_to_be_added_timeout,
        )

    async def get_handled_count(self) -> int:
        return await (await self._queue()).get_handled_count()

    async def get_total_count(self) -> int:
        return await (await self._queue()).get_total_count()

    async def drop(self) -> None:
        await (await self._queue()).drop()

    async def purge(self) -> None:
        await (await self._queue()).purge()
