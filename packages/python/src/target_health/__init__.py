"""Target Health for Python crawlers: records every attempt's outcome to the Target Health API and
obeys each site's controls (concurrency, pace, pause with canaries only, stop).

- `target_health.scrapy`: the Scrapy extension (`pip install target-health[scrapy]`, docs/crawlers-scrapy.md);
- `target_health.crawlee`: the crawlee-python integration (`pip install target-health[crawlee]`,
  docs/crawlers-crawlee-python.md).

This package itself is the crawler-agnostic core both use and imports nothing outside the standard
library: `events` (building the events), `sender` (the batching thread that posts them), `follower` and
`controls` (the controls stream and what it means for one request), `sse` (the stream's parser). Nothing
here imports a crawler, so importing `target_health` never pulls Scrapy or Crawlee in.
"""

__version__ = "0.1.0"
