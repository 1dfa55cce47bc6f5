"""Target Health for Scrapy: records every request's outcome to the Target Health API and obeys the
site's controls (concurrency, pace, pause, canary-only, stop). See docs/crawlers-scrapy.md.

    DOWNLOADER_MIDDLEWARES = {"target_health.scrapy.TargetHealthDownloaderMiddleware": 950}
    SPIDER_MIDDLEWARES = {"target_health.scrapy.TargetHealthSpiderMiddleware": 45}
    EXTENSIONS = {"target_health.scrapy.TargetHealthExtension": 500}

The API's address and token come from the environment (TH_API, TH_TOKEN: a token with the scopes
ingest,read), or from the settings TARGET_HEALTH_API_URL and TARGET_HEALTH_TOKEN.
"""

from .extension import TargetHealthExtension
from .middleware import TargetHealthDownloaderMiddleware, TargetHealthSpiderMiddleware, extraction
from .signals import controls_changed

__all__ = [
    "TargetHealthExtension",
    "TargetHealthDownloaderMiddleware",
    "TargetHealthSpiderMiddleware",
    "controls_changed",
    "extraction",
]
