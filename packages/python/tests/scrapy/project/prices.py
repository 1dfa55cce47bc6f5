"""The spider of the `scrapy startproject` test (test/integration/scrapy-extension.test.ts): copied into the
spiders folder of a project made by `scrapy startproject`, whose settings.py gets the settings
docs/crawlers-scrapy.md gives, and run with `scrapy crawl prices` — the way users run Scrapy. It imports
`target_health.scrapy` at the top of the module, as the docs show.

Environment: TH_PROXY (host:port of the test's forward proxy, which plays the site), TH_SITE, TH_PAGES
(the test also runs it with `-s STATS_CLASS=health_spider.JsonFileStats`, writing the final stats to
TH_STATS_FILE). stdout: lines starting with `@@th ` — each controls change the extension applied
(`controls_changed`, with the time), and the extension's counts every 0.1 s.
"""

import json
import os
import sys
import time

import scrapy
from scrapy import signals
from twisted.internet import task

import target_health.scrapy


def say(line):
    sys.stdout.write("@@th " + json.dumps(line) + "\n")
    sys.stdout.flush()


class PricesSpider(scrapy.Spider):
    name = "prices"
    reports = None

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.on_controls, signal=target_health.scrapy.controls_changed)
        crawler.signals.connect(spider.on_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider.on_closed, signal=signals.spider_closed)
        return spider

    def on_controls(self, controls):
        say({"heard": {"site": controls.site, "paused": controls.paused, "at": int(time.time() * 1000)}})

    def report(self):
        stats = self.crawler.stats.get_stats()
        say(
            {
                "stats": {
                    k.split("/", 1)[1]: v
                    for k, v in stats.items()
                    if k.startswith("target_health/") and isinstance(v, (int, float))
                }
            }
        )

    def on_opened(self, spider):
        self.reports = task.LoopingCall(self.report)
        self.reports.start(0.1)

    def on_closed(self, spider, reason):
        if self.reports is not None and self.reports.running:
            self.reports.stop()

    async def start(self):
        proxy = f"http://residential-de:secret@{os.environ['TH_PROXY']}"
        for i in range(int(os.environ["TH_PAGES"])):
            yield scrapy.Request(
                f"http://{os.environ['TH_SITE']}/p/{i}", meta={"proxy": proxy}, callback=self.parse_product
            )

    def parse_product(self, response):
        names = response.css("h1::text").getall()
        target_health.scrapy.extraction(response, result="ok" if names else "empty", valid_records=len(names))
        for name in names:
            yield {"name": name, "url": response.url}
