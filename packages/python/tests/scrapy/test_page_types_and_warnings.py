"""The page type each attempt gets, and the open-time warning about settings the controls cannot lower."""

import logging
from types import SimpleNamespace

from target_health.scrapy.extension import concurrency_warnings
from target_health.pages import PAGE_TYPES_REMEMBERED
from target_health.scrapy.middleware import PageTypes
from target_health.scrapy.runtime import Settings


def parse_product(response):
    pass


def parse_canary(response):
    pass


def req(url, callback=None, **meta):
    return SimpleNamespace(url=url, callback=callback, meta=meta)


def test_the_callback_names_production_pages_and_an_explicit_page_type_wins():
    types = PageTypes()
    assert types.of(req("https://shop.example/p/1", parse_product), "shop.example") == "parse_product"
    assert (
        types.of(req("https://shop.example/p/1", parse_product, target_health_page_type="product"), "shop.example")
        == "product"
    )
    assert types.of(req("https://shop.example/", None), "shop.example") is None


def test_a_canary_takes_the_page_type_of_the_page_it_revisits_not_its_own_callback(caplog):
    types = PageTypes()
    types.of(req("https://shop.example/p/1", parse_product), "shop.example")
    assert (
        types.of(req("https://shop.example/p/1", parse_canary, target_health_canary=True), "shop.example")
        == "parse_product"
    )
    # A canary of a page never crawled: no page type (judged site-wide), said once per site.
    with caplog.at_level(logging.WARNING, logger="target_health"):
        assert (
            types.of(req("https://shop.example/p/2", parse_canary, target_health_canary=True), "shop.example") is None
        )
        assert (
            types.of(req("https://shop.example/p/3", parse_canary, target_health_canary=True), "shop.example") is None
        )
    assert caplog.text.count("canaries of shop.example have no page type") == 1
    # Its explicit page type wins.
    assert (
        types.of(
            req("https://shop.example/p/2", parse_canary, target_health_canary=True, target_health_page_type="product"),
            "shop.example",
        )
        == "product"
    )


def test_the_setting_names_every_request_and_the_memory_is_bounded():
    types = PageTypes(lambda request: "listing" if "/c/" in request.url else None)
    assert types.of(req("https://shop.example/c/shoes", parse_product), "shop.example") == "listing"
    assert types.of(req("https://shop.example/p/1", parse_product), "shop.example") == "parse_product"
    for i in range(PAGE_TYPES_REMEMBERED + 5):
        types.of(req(f"https://shop.example/p/{i}", parse_product), "shop.example")
    assert len(types.memory.by_url) == PAGE_TYPES_REMEMBERED


def settings(**kw):
    base = dict(
        enabled=True,
        api_url="http://127.0.0.1:1",
        token="t",
        batch_size=500,
        batch_interval=1.0,
        max_queue=10,
        close_timeout=1.0,
        controls_mode="stream",
        controls_sites=(),
        poll_interval=5.0,
        unknown_site="allow",
        wait_for_controls=0.0,
        base_delay=0.0,
        max_concurrency=8,
        extraction_wait=30.0,
    )
    return Settings(**{**base, **kw})


def test_a_per_domain_concurrency_of_one_is_called_out_with_the_setting_and_the_fix():
    assert concurrency_warnings(settings(max_concurrency=8)) == []
    [warning] = concurrency_warnings(settings(max_concurrency=1))
    assert warning.startswith("CONCURRENT_REQUESTS_PER_DOMAIN = 1: the controls' concurrencyLimit only lowers")
    assert "e.g. 8" in warning
    [warning] = concurrency_warnings(settings(max_concurrency=1, per_ip_concurrency=1))
    assert warning.startswith("CONCURRENT_REQUESTS_PER_IP = 1")
    assert concurrency_warnings(settings(max_concurrency=1, controls_mode="off")) == []


def test_the_api_and_token_come_from_the_environment_unless_the_settings_give_them(monkeypatch):
    import pytest
    from scrapy.settings import Settings as ScrapySettings

    monkeypatch.setenv("TH_API", "http://api.example:8787")
    monkeypatch.setenv("TH_TOKEN", "th_from_env")
    s = Settings.from_scrapy(ScrapySettings())
    assert (s.api_url, s.token) == ("http://api.example:8787", "th_from_env")
    s = Settings.from_scrapy(
        ScrapySettings({"TARGET_HEALTH_API_URL": "http://other:1", "TARGET_HEALTH_TOKEN": "th_set"})
    )
    assert (s.api_url, s.token) == ("http://other:1", "th_set")
    monkeypatch.delenv("TH_TOKEN")
    with pytest.raises(ValueError, match=r"^TARGET_HEALTH_TOKEN: not set, and no TH_TOKEN in the environment"):
        Settings.from_scrapy(ScrapySettings())
