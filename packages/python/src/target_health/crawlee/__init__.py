"""Target Health for crawlee-python (HTTP crawlers: ParselCrawler, BeautifulSoupCrawler, HttpCrawler;
crawlee 1.10.1+): records every attempt's outcome — blocked answers with their body, network errors,
retries — to the Target Health API and obeys each site's controls (concurrency, pause with canaries only,
stop). See docs/crawlers-crawlee-python.md.

    from crawlee.crawlers import ParselCrawler
    from target_health.crawlee import TargetHealth

    th = TargetHealth()                                   # TH_API, TH_TOKEN (scopes ingest,read)
    crawler = ParselCrawler(request_manager=th.request_manager())
    th.attach(crawler)
    async with th:                                        # waits for the sites' controls first
        await crawler.run(urls)

A canary: `Request.from_url(url, user_data={"target_health_canary": True})`.
"""

from ..events import META_CANARY, META_PAGE_TYPE, META_ROUTE
from ._gate import ControlledRequestManager
from ._integration import TargetHealth

__all__ = ["TargetHealth", "ControlledRequestManager", "META_CANARY", "META_PAGE_TYPE", "META_ROUTE"]
