"""The crawl of crawlee-python-e2e (test/integration/crawlee-python.test.ts): a ParselCrawler with Target
Health attached, as docs/crawlers-crawlee-python.md shows, through a labelled proxy.

TH_PLAN: {"site": [["/path", "page" | "canary"], …]}; TH_PROXY: the proxy URL (its user name is the route);
TH_API, TH_TOKEN: the API. Prints one JSON line at the end: Target Health's counts and Crawlee's statistics.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from crawlee import ConcurrencySettings, Request
from crawlee.crawlers import ParselCrawler, ParselCrawlingContext
from crawlee.proxy_configuration import ProxyConfiguration
from crawlee.storage_clients import MemoryStorageClient

from target_health.crawlee import META_CANARY, TargetHealth


async def main() -> None:
    plan: dict[str, list[list[str]]] = json.loads(os.environ["TH_PLAN"])
    requests = [
        Request.from_url(
            f"http://{site}{path}", label="product", user_data={META_CANARY: True} if kind == "canary" else {}
        )
        for site, paths in plan.items()
        for path, kind in paths
    ]
    th = TargetHealth(batch_interval=0.2)
    crawler = ParselCrawler(
        request_manager=th.request_manager(),
        proxy_configuration=ProxyConfiguration(proxy_urls=[os.environ["TH_PROXY"]]),
        storage_client=MemoryStorageClient(),
        concurrency_settings=ConcurrencySettings(min_concurrency=8, desired_concurrency=8, max_concurrency=8),
        max_request_retries=1,
        max_session_rotations=1,
    )
    handled: list[str] = []

    @crawler.router.default_handler
    async def product(context: ParselCrawlingContext) -> None:
        price = context.selector.css(".price::text").get()
        th.extraction(context, result="ok" if price else "empty", valid_records=1 if price else 0)
        handled.append(context.request.url)

    th.attach(crawler)
    async with th:
        stats = await crawler.run(requests)
    print(
        json.dumps(
            {
                "final": True,
                "counts": th.counts,
                "handled": len(handled),
                "finished": stats.requests_finished,
                "failed": stats.requests_failed,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
