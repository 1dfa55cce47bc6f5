"""Each attempt's event, from the navigation hooks and the error handlers to the end of the attempt.

An attempt starts in a pre-navigation hook; the post-navigation hook sees every answer
before Crawlee judges its status — a 403 challenge's body included, which Crawlee then turns into a
SessionError and never shows the request handler. A network error never reaches that hook: the error
handlers name it. The event is sent when the attempt ends (the request manager is told the request is
handled or goes back for a retry), so it carries the extraction the request handler reported.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from .. import events as ev
from ..pages import PageTypeMemory

if TYPE_CHECKING:
    from crawlee import Request
    from crawlee.crawlers import BasicCrawlingContext, HttpCrawlingContext

log = logging.getLogger("target_health.crawlee")
SOURCE = "crawlee-py"  # the events' id prefix


@dataclass
class Attempt:
    started: float
    route: dict[str, Any]
    canary: bool
    retries: int
    page_type: str | None
    event: dict[str, Any] | None = None
    error: BaseException | None = None
    # The request manager was told the attempt ended before any error handler named its error (a final
    # failure: Crawlee marks the request handled, then calls failed_request_handler).
    ended: bool = field(default=False)


def _charset(content_type: str | None) -> str | None:
    for part in (content_type or "").split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            return value.strip('"')
    return None


class Attempts:
    def __init__(
        self,
        record: Callable[[dict[str, Any]], None],
        *,
        page_type: Callable[[Request], str | None] | None = None,
        route: Callable[[Request], Mapping[str, Any] | None] | None = None,
    ) -> None:
        self._record = record
        self._page_type = page_type
        self._route = route
        self._pages = PageTypeMemory(f"user_data[{ev.META_PAGE_TYPE!r}]")
        self._open: dict[str, Attempt] = {}

    def __len__(self) -> int:
        return len(self._open)

    def _route_of(self, context: BasicCrawlingContext) -> dict[str, Any]:
        explicit = context.request.user_data.get(ev.META_ROUTE)
        if isinstance(explicit, Mapping):
            return dict(explicit)
        if self._route is not None:
            return dict(self._route(context.request) or {})
        proxy = context.proxy_info
        return ev.route_from_proxy(proxy.url, proxy.username or None) if proxy is not None else {}

    async def before_navigation(self, context: BasicCrawlingContext) -> None:
        request = context.request
        canary = bool(request.user_data.get(ev.META_CANARY))
        explicit = request.user_data.get(ev.META_PAGE_TYPE)
        if not explicit and self._page_type is not None:
            explicit = self._page_type(request)
        page_type = self._pages.of(
            url=request.url,
            site=ev.site_of(request.url),
            canary=canary,
            explicit=str(explicit) if explicit else None,
            fallback=request.label,
        )
        # Crawlee counts a retry after an error and a session rotation after a block apart; both are
        # attempts of the same request that came before this one.
        retries = (request.retry_count or 0) + (request.session_rotation_count or 0)
        self._open[request.unique_key] = Attempt(
            started=time.monotonic(), route=self._route_of(context), canary=canary, retries=retries, page_type=page_type
        )

    async def after_navigation(self, context: HttpCrawlingContext) -> None:
        attempt = self._open.get(context.request.unique_key)
        if attempt is None:
            return
        response = context.http_response
        body = await response.read()
        headers = response.headers
        attempt.event = ev.response_event(
            source=SOURCE,
            url=context.request.url,
            route=attempt.route,
            latency_ms=(time.monotonic() - attempt.started) * 1000.0,
            page_type=attempt.page_type,
            canary=attempt.canary,
            retries=attempt.retries,
            status=response.status_code,
            body=body,
            encoding=_charset(headers.get("content-type")),
            header_list=lambda name: [v] if (v := headers.get(name)) else [],
        )

    def failed(self, request: Request, error: BaseException) -> None:
        """An error handler's error: the attempt's outcome when no answer came (a network error)."""
        attempt = self._open.get(request.unique_key)
        if attempt is None or attempt.event is not None:
            return
        attempt.error = error
        if attempt.ended:
            self.end(request)

    def extraction(self, request: Request, record: dict[str, Any]) -> None:
        attempt = self._open.get(request.unique_key)
        if attempt is not None and attempt.event is not None:
            attempt.event["extraction"] = record

    def end(self, request: Request) -> None:
        """The attempt is over (handled, or reclaimed for a retry): its event goes."""
        attempt = self._open.get(request.unique_key)
        if attempt is None:
            return
        if attempt.event is None and attempt.error is None:
            attempt.ended = True  # failed_request_handler names the error next
            return
        del self._open[request.unique_key]
        if attempt.event is not None:
            self._record(attempt.event)
            return
        assert attempt.error is not None
        self._record(
            ev.exception_event(
                source=SOURCE,
                url=request.url,
                route=attempt.route,
                latency_ms=(time.monotonic() - attempt.started) * 1000.0,
                page_type=attempt.page_type,
                canary=attempt.canary,
                retries=attempt.retries,
                exc=attempt.error,
            )
        )

    def close(self) -> int:
        """At the crawl's end: attempts that got neither an answer nor an error were never sent (a hook
        of the user's failed before navigation); nothing is invented for them."""
        left = len(self._open)
        for attempt in self._open.values():
            if attempt.event is not None:
                self._record(attempt.event)
        self._open.clear()
        return left
