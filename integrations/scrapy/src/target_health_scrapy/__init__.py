"""Target Health for Scrapy: records every request's outcome to the Target Health API and obeys the
site's controls (concurrency, pace, pause, canary-only, stop). See docs/crawlers-scrapy.md.

    DOWNLOADER_MIDDLEWARES = {"target_health_scrapy.TargetHealthDownloaderMiddleware": 950}
    SPIDER_MIDDLEWARES = {"target_health_scrapy.TargetHealthSpiderMiddleware": 45}
    EXTENSIONS = {"target_health_scrapy.TargetHealthExtension": 500}
    TARGET_HEALTH_API_URL = "http://127.0.0.1:8787"
    TARGET_HEALTH_TOKEN = "th_…"   # scopes ingest,read
"""
from .extension import TargetHealthExtension
from .middleware import TargetHealthDownloaderMiddleware, TargetHealthSpiderMiddleware, extraction
from .signals import controls_changed

__all__ = ["TargetHealthExtension", "TargetHealthDownloaderMiddleware", "TargetHealthSpiderMiddleware", "controls_changed", "extraction"]
__version__ = "0.1.0"
