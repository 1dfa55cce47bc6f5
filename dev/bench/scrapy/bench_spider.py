"""The spider of `npm run bench:scrapy` (dev/bench/scrapy-extension.ts): TH_BENCH_PAGES product pages of one
site, through the benchmark's forward proxy, each page's title and price extracted with CSS selectors as
a price monitor would. With TH_BENCH_EXTENSION=1 the Target Health extension is on (API and token from TH_API and
TH_TOKEN), otherwise the same crawl without it. At close it writes the process's CPU time (all threads:
the sender and the follower included) and the crawl's counts to TH_BENCH_OUT.
"""

import json
import os
import resource
import time

import scrapy
from scrapy.statscollectors import MemoryStatsCollector

WITH_EXTENSION = os.environ.get("TH_BENCH_EXTENSION") == "1"

SETTINGS = {
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
    "ROBOTSTXT_OBEY": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "COOKIES_ENABLED": False,
}
if WITH_EXTENSION:
    SETTINGS.update(
        {
            "DOWNLOADER_MIDDLEWARES": {"target_health.scrapy.TargetHealthDownloaderMiddleware": 950},
            "SPIDER_MIDDLEWARES": {"target_health.scrapy.TargetHealthSpiderMiddleware": 45},
            "EXTENSIONS": {"target_health.scrapy.TargetHealthExtension": 500},
        }
    )


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class FiguresStats(MemoryStatsCollector):
    """Writes the figures once every spider_closed handler has run (the extension's last sends included)."""

    def open_spider(self, *args, **kwargs):
        super().open_spider(*args, **kwargs)
        # From the crawl's start: Scrapy's and the extension's start-up (imports) are left out of both runs.
        self.cpu0, self.t0 = cpu_seconds(), time.monotonic()

    def _persist_stats(self, stats, *args):
        out = {
            "cpuS": cpu_seconds() - self.cpu0,
            "wallS": time.monotonic() - self.t0,
            "pages": stats.get("response_received_count", 0),
            "items": stats.get("item_scraped_count", 0),
        }
        if WITH_EXTENSION:
            out["eventsSent"] = stats.get("target_health/events_sent", 0)
        with open(os.environ["TH_BENCH_OUT"], "w") as f:
            json.dump(out, f)


SETTINGS["STATS_CLASS"] = FiguresStats


class BenchSpider(scrapy.Spider):
    name = "bench"
    custom_settings = SETTINGS

    async def start(self):
        proxy = f"http://{os.environ['TH_BENCH_PROXY']}"
        site = os.environ["TH_BENCH_SITE"]
        for i in range(int(os.environ["TH_BENCH_PAGES"])):
            yield scrapy.Request(
                f"http://{site}/p/{i}", callback=self.parse_product, meta={"proxy": proxy}, dont_filter=True
            )

    def parse_product(self, response):
        # A price monitor's product: the page's title and its first price.
        item = {
            "title": response.xpath("//title/text()").get(),
            "price": response.xpath("(//span[@class='price'])[1]/text()").get(),
            "url": response.url,
        }
        if WITH_EXTENSION:
            import target_health.scrapy

            target_health.scrapy.extraction(
                response, result="ok" if item["price"] else "empty", valid_records=1 if item["price"] else 0
            )
        yield item
