"""The spider of the Scrapy end-to-end test (test/integration/scrapy-e2e.test.ts), run with
`python -m scrapy runspider`: a price monitor that revisits the hostile site's catalogue for as long as it
runs, with the Target Health extension recording every attempt and obeying the controls the real loops
decide — the Scrapy twin of the demo's Crawlee crawler (dev/demo/crawler.ts).

- Each host is crawled by a fixed number of *chains*: a page's callback (or its errback, for a 403 or a
  download error) schedules the next page of the same host. A host therefore always has that many
  requests in the crawl, and its request rate is set by the site's answer time and by what the extension
  admits (the controls' concurrencyLimit while throttled; nothing but canaries while paused).
- Canaries: every `canaryEveryS`, each host gets one request marked as a canary
  (`meta["target_health_canary"]`, and `?th-canary=1` so the site's access log tells it apart). The
  extension does not make canaries itself; it lets the marked ones through while a site is paused with
  canaryOnly.
- Requests go round-robin through the labelled proxies; the extension reads the route from the proxy
  URL's user name (`dc-de` → pool dc, country DE).

stdout: a JSON line (starting `{"at":`) every `reportEveryS` and a final one (`"final": true`) once the
stats are closed — after the extension's last send: production pages handled and attempts finished per
host, the extension's `target_health/*` stats, and each controls change the extension applied
(`controls_changed` signal) with the time it did.

Environment: TH_API_URL, TH_TOKEN, TH_CONFIG (JSON: hosts, proxyUrls, chainsPerHost, canaryEveryS,
reportEveryS, items). SIGTERM: Scrapy's graceful shutdown (in-flight requests finish, the extension sends
what it holds), then the final line.
"""

import itertools
import json
import os
import sys
import time

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.statscollectors import MemoryStatsCollector
from twisted.internet import task

import target_health.scrapy

CONFIG = json.loads(os.environ.get("TH_CONFIG", "{}"))
REPORT = {"handled": {}, "finished": {}, "heard": []}


def now_ms():
    return int(time.time() * 1000)


def report_line(stats, final):
    line = {
        "at": now_ms(),
        "final": final,
        "handled": dict(REPORT["handled"]),
        "finished": dict(REPORT["finished"]),
        "stats": {
            k[len("target_health/") :]: v
            for k, v in stats.items()
            if k.startswith("target_health/") and isinstance(v, (int, float))
        },
        "heard": REPORT["heard"],
    }
    REPORT["heard"] = []
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


class ReportingStats(MemoryStatsCollector):
    """Prints the final report once the stats are closed: after every spider_closed handler, so after the
    extension has sent its last events and published its final counts."""

    def _persist_stats(self, stats, *args):
        report_line(stats, final=True)


class MonitorSpider(scrapy.Spider):
    name = "monitor"
    custom_settings = {
        "DOWNLOADER_MIDDLEWARES": {"target_health.scrapy.TargetHealthDownloaderMiddleware": 950},
        "SPIDER_MIDDLEWARES": {"target_health.scrapy.TargetHealthSpiderMiddleware": 45},
        "EXTENSIONS": {"target_health.scrapy.TargetHealthExtension": 500},
        "STATS_CLASS": ReportingStats,
        "TARGET_HEALTH_API_URL": os.environ.get("TH_API_URL", ""),
        "TARGET_HEALTH_TOKEN": os.environ.get("TH_TOKEN", ""),
        "TARGET_HEALTH_SITES": CONFIG.get("hosts", []),
        "TARGET_HEALTH_BATCH_INTERVAL": 0.25,
        # The loop's nominal concurrency: the controls lower it, never raise it above this.
        "CONCURRENT_REQUESTS_PER_DOMAIN": CONFIG.get("chainsPerHost", 4),
        "CONCURRENT_REQUESTS": 64,
        "DOWNLOAD_TIMEOUT": 15,
        "RETRY_TIMES": 2,
        "ROBOTSTXT_OBEY": False,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOGSTATS_INTERVAL": 0,
        "LOG_LEVEL": "INFO",
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.hosts = list(CONFIG["hosts"])
        self.proxies = itertools.cycle(CONFIG["proxyUrls"])
        self.items = int(CONFIG.get("items", 200))
        self.step = itertools.count()
        self.loops = []

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.on_controls, signal=target_health.scrapy.controls_changed)
        crawler.signals.connect(spider.on_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider.on_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider.on_closed, signal=signals.spider_closed)
        return spider

    # --- the crawl ----------------------------------------------------------------------------------

    def page(self, host, canary=False):
        path = "/item/1?th-canary=1" if canary else f"/item/{next(self.step) % self.items + 1}"
        meta = {"proxy": next(self.proxies), "host": host}
        if canary:
            meta["target_health_canary"] = True
        return scrapy.Request(
            f"http://{host}{path}", callback=self.parse_item, errback=self.failed, meta=meta, dont_filter=True
        )

    async def start(self):
        for host in self.hosts:
            for _ in range(int(CONFIG.get("chainsPerHost", 4))):
                yield self.page(host)

    def running(self):
        engine = self.crawler.engine
        return engine is not None and engine.running

    def finish(self, request):
        """An attempt chain step is over (page handled or given up): count it and schedule the next one."""
        host = request.meta["host"]
        if request.meta.get("target_health_canary"):
            return []
        REPORT["finished"][host] = REPORT["finished"].get(host, 0) + 1
        return [self.page(host)] if self.running() else []

    def parse_item(self, response):
        priced = bool(response.css(".price[data-price]"))
        if priced:
            target_health.scrapy.extraction(response, result="ok", valid_records=1)
        else:
            target_health.scrapy.extraction(
                response, result="missing_fields", missing_fields=["price"], valid_records=0
            )
        host = response.meta["host"]
        if not response.meta.get("target_health_canary"):
            REPORT["handled"][host] = REPORT["handled"].get(host, 0) + 1
        yield from self.finish(response.request)

    def failed(self, failure):
        # A 403 (HttpError) or a download error after the retries: the chain goes on, as a monitor's does.
        # IgnoreRequest (a stopped site, or a held request handed back at close) ends the chain.
        if failure.check(IgnoreRequest) and not failure.check(HttpError):
            return []
        return self.finish(failure.request)

    # --- canaries, reports, lifetime ------------------------------------------------------------------

    def send_canaries(self):
        if not self.running():
            return
        for host in self.hosts:
            self.crawler.engine.crawl(self.page(host, canary=True))

    def on_controls(self, controls):
        REPORT["heard"].append(
            {
                "at": now_ms(),
                "site": controls.site,
                "version": controls.version,
                "paused": controls.paused,
                "canaryOnly": controls.canary_only,
                "concurrencyLimit": controls.concurrency_limit,
                "band": controls.band,
            }
        )

    def on_opened(self, spider):
        every = float(CONFIG.get("canaryEveryS", 2.0))
        if every > 0:
            canaries = task.LoopingCall(self.send_canaries)
            canaries.start(every, now=False)
            self.loops.append(canaries)
        reports = task.LoopingCall(lambda: report_line(self.crawler.stats.get_stats(), final=False))
        reports.start(float(CONFIG.get("reportEveryS", 0.5)), now=True)
        self.loops.append(reports)

    def on_idle(self, spider):
        # A monitor runs until it is told to stop (SIGTERM), even when every host is paused.
        raise DontCloseSpider("monitoring")

    def on_closed(self, spider, reason):
        for loop in self.loops:
            if loop.running:
                loop.stop()
