"""The extension's own Scrapy signal, for spiders and extensions that want to know what their crawl obeys.

    from target_health.scrapy import controls_changed

    crawler.signals.connect(on_controls, signal=controls_changed)

    def on_controls(controls):          # a target_health.controls.SiteControls
        ...

`controls_changed` is sent on the reactor thread each time a site's controls change (a newer version
arrived from the API), after the middleware has applied them to the site's downloader slots — from then
on the site's requests obey them.
"""

controls_changed = object()
