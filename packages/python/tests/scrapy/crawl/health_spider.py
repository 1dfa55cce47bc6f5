"""The spider of the real-crawl test (test/integration/scrapy-extension.test.ts), run with
`python -m scrapy runspider`. Every request goes through one local forward proxy (the test's HTTP server,
which plays the sites), so the route comes from the proxy URL's username as with a vendor's gateway.

Environment: TH_API_URL, TH_TOKEN, TH_PROXY (host:port), TH_PLAN (JSON: site → list of [path, kind]),
TH_STATS_FILE (where the final Scrapy stats are written as JSON).
"""

import json
import os

import scrapy
from scrapy.statscollectors import MemoryStatsCollector

import target_health.scrapy


class JsonFileStats(MemoryStatsCollector):
    """Writes the final stats (after every spider_closed handler ran) for the test to read."""

    def _persist_stats(self, stats, *args):
        with open(os.environ["TH_STATS_FILE"], "w") as f:
            json.dump(stats, f, default=str)


class HealthSpider(scrapy.Spider):
    name = "health"
    custom_settings = {
        "DOWNLOADER_MIDDLEWARES": {"target_health.scrapy.TargetHealthDownloaderMiddleware": 950},
        "SPIDER_MIDDLEWARES": {"target_health.scrapy.TargetHealthSpiderMiddleware": 45},
        "EXTENSIONS": {"target_health.scrapy.TargetHealthExtension": 500},
        "STATS_CLASS": JsonFileStats,
        "TARGET_HEALTH_API_URL": os.environ.get("TH_API_URL", ""),
        "TARGET_HEALTH_TOKEN": os.environ.get("TH_TOKEN", ""),
        "TARGET_HEALTH_BATCH_INTERVAL": 0.2,
        "TARGET_HEALTH_BATCH_SIZE": 50,
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "RETRY_TIMES": 2,
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
    }

    async def start(self):
        proxy = f"http://residential-de:secret@{os.environ['TH_PROXY']}"
        plan = json.loads(os.environ["TH_PLAN"])
        for site, pages in plan.items():
            for path, kind in pages:
                meta = {"proxy": proxy}
                if kind == "canary":
                    meta["target_health_canary"] = True
                yield scrapy.Request(
                    f"http://{site}{path}",
                    callback=self.parse_product,
                    errback=self.failed,
                    meta=meta,
                    dont_filter=True,
                )

    def failed(self, failure):
        self.logger.info("download failed: %s (%s)", failure.request.url, failure.type.__name__)

    def parse_product(self, response):
        names = response.css("h1::text").getall()
        if names:
            target_health.scrapy.extraction(response, result="ok", valid_records=len(names))
            yield {"name": names[0], "url": response.url}
        else:
            target_health.scrapy.extraction(response, result="empty", valid_records=0)
