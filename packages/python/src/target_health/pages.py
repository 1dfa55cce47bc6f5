"""The page type of an attempt, shared by the integrations (Scrapy: the callback's name; crawlee-python:
the request's label).

A canary revisits a page the crawl knows and is judged by that page type's norms; a page type of its own
(a `parse_canary` callback, a `canary` label) would give it norms learned from canaries alone. So a
canary without an explicit page type takes the one last recorded for its URL by a production request,
and has none (site-wide judgement) when its URL was never crawled — said once per site.
"""

from __future__ import annotations

import logging

log = logging.getLogger("target_health")

# Page types of recently crawled production URLs, for canaries that revisit one of them.
PAGE_TYPES_REMEMBERED = 10_000


class PageTypeMemory:
    def __init__(self, mark_name: str) -> None:
        # How the user sets a page type explicitly, named in the warning (meta[...] / user_data[...]).
        self.mark_name = mark_name
        self.by_url: dict[str, str] = {}
        self.warned: set[str] = set()

    def of(self, *, url: str, site: str, canary: bool, explicit: str | None, fallback: str | None) -> str | None:
        """`explicit`: what the user set (a mark or a resolver); `fallback`: the crawler's own name for the
        page (callback, label), used for production requests and remembered for the URL's canaries."""
        if explicit:
            return explicit
        if canary:
            known = self.by_url.get(url)
            if known is None and site not in self.warned:
                self.warned.add(site)
                log.warning(
                    "target-health: canaries of %s have no page type (%s was not crawled as a production page "
                    "first); set %s to the page type they stand for",
                    site,
                    url,
                    self.mark_name,
                )
            return known
        if fallback:
            if len(self.by_url) >= PAGE_TYPES_REMEMBERED:
                self.by_url.pop(next(iter(self.by_url)))  # the oldest: dicts keep insertion order
            self.by_url[url] = fallback
        return fallback
