"""Event building, route parsing and the mapping of download exceptions to `networkError`."""

import socket
import ssl

import time

import pytest
from OpenSSL import SSL
from scrapy import exceptions as sx
from scrapy.core.downloader.handlers.http11 import TunnelError
from twisted.internet import error as terr
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseNeverReceived

from target_health import events as ev


@pytest.mark.parametrize(
    "proxy, route",
    [
        ("http://residential-de:secret@gw.example.net:8000", {"pool": "residential", "country": "DE"}),
        ("http://datacenter_us_session-abc:pw@127.0.0.1:9000", {"pool": "datacenter", "country": "US"}),
        ("http://mobile:pw@gw.example.net:8000", {"pool": "mobile"}),
        ("http://gw.example.net:8000", {"pool": "gw.example.net"}),
        ("gw.example.net:8000", {"pool": "gw.example.net"}),
        (None, {}),
        ("", {}),
    ],
)
def test_route_from_proxy(proxy, route):
    assert ev.route_from_proxy(proxy) == route


def test_route_from_the_proxy_authorization_header():
    # HttpProxyMiddleware moves the URL's credentials into this header before the middleware runs.
    auth = b"Basic " + __import__("base64").b64encode(b"residential-de:secret")
    assert ev.proxy_user(auth) == "residential-de"
    assert ev.route_from_proxy("http://127.0.0.1:8000", ev.proxy_user(auth)) == {"pool": "residential", "country": "DE"}
    assert ev.proxy_user(b"Bearer x") is None and ev.proxy_user(b"Basic !!!") is None and ev.proxy_user(None) is None


def test_clean_route_keeps_only_what_the_api_accepts():
    assert ev.clean_route({"country": "de", "pool": "res eu", "session": "sticky-10m", "other": 1}) == {
        "country": "DE",
        "pool": "res-eu",
        "session": "sticky-10m",
    }
    assert ev.clean_route({"country": "Germany", "pool": "!!"}) == {}


def wrapped(outer, cause):
    outer.__cause__ = cause
    return outer


@pytest.mark.parametrize(
    "exc, kind",
    [
        (terr.TimeoutError(), "timeout"),
        (terr.TCPTimedOutError(), "timeout"),
        (TimeoutError(), "timeout"),
        (terr.ConnectionRefusedError(), "connection_reset"),
        (terr.ConnectionLost(), "connection_reset"),
        (ConnectionResetError(), "connection_reset"),
        (ResponseNeverReceived([Failure(terr.ConnectionLost())]), "connection_reset"),
        (ResponseNeverReceived([Failure(SSL.Error("handshake"))]), "tls"),
        (terr.DNSLookupError(), "dns"),
        (socket.gaierror(), "dns"),
        (TunnelError("Could not open CONNECT tunnel"), "proxy"),
        (SSL.Error(), "tls"),
        (ssl.SSLCertVerificationError(), "tls"),
        (ValueError("odd"), "other"),
        # Scrapy 2.13+ wraps Twisted's errors, keeping the original as the cause.
        (sx.DownloadConnectionRefusedError("refused"), "connection_reset"),
        (sx.CannotResolveHostError("x"), "dns"),
        (sx.DownloadTimeoutError("x"), "timeout"),
        (sx.DownloadFailedError("x"), "connection_reset"),
        (sx.ResponseDataLossError("x"), "connection_reset"),
        (wrapped(sx.DownloadFailedError("x"), ResponseNeverReceived([Failure(SSL.Error("handshake"))])), "tls"),
        (
            wrapped(sx.DownloadFailedError("x"), ResponseNeverReceived([Failure(terr.ConnectionLost())])),
            "connection_reset",
        ),
        (sx.DownloadCancelledError("x"), "other"),
    ],
)
def test_exception_kind(exc, kind):
    assert ev.exception_kind(exc) == kind


def headers(d):
    return lambda name: d.get(name, [])


def test_response_event_has_every_classification_input():
    body = b"<html><head><title> Just a\n moment... </title></head><body>" + b"x" * 100_000 + b"</body></html>"
    e = ev.response_event(
        source="scrapy",
        url="https://Shop.Example.com:8443/p/1?q=1",
        retries=2,
        canary=True,
        route={"pool": "res", "country": "de"},
        latency_ms=412.3456,
        page_type="parse_product",
        status=403,
        body=body,
        encoding="utf-8",
        header_list=headers(
            {
                "server": [b"cloudflare"],
                "cf-mitigated": [b"challenge"],
                "set-cookie": [b"a=1", b"_px3=2"],
                "x-other": [b"no"],
            }
        ),
    )
    assert e["site"] == "shop.example.com"
    assert e["status"] == 403 and e["bytes"] == len(body) and e["latencyMs"] == 412.346
    assert e["route"] == {"pool": "res", "country": "DE"}
    assert e["retries"] == 2 and e["canary"] is True and e["pageType"] == "parse_product"
    assert e["headers"] == {"server": "cloudflare", "cf-mitigated": "challenge", "set-cookie": "a=1\n_px3=2"}
    assert e["title"] == "Just a moment..."
    # Larger than the sample: its head and its tail, as packages/crawler/src/events/text.ts bodySampleOf cuts it.
    assert (
        len(e["bodySample"]) <= ev.BODY_SAMPLE_CHARS
        and e["bodySample"].startswith("<html>")
        and e["bodySample"].endswith("</body></html>")
    )
    assert e["bodySample"].count(ev.SAMPLE_GAP) == 1
    assert e["eventId"].startswith("scrapy-") and isinstance(e["ts"], int) and abs(e["ts"] / 1000 - time.time()) < 60
    assert "networkError" not in e


def test_a_large_page_keeps_the_marker_in_its_last_kilobytes():
    # Site-branded Cloudflare pages put the challenge script before </body>, hundreds of KB in.
    body = (
        "<html><head><title>Gusto</title></head><body>".encode()
        + "é".encode() * 300_000
        + b"<script>window._cf_chl_opt={}</script></body></html>"
    )
    e = ev.response_event(
        source="crawlee-py",
        url="https://a.example.com/",
        route={},
        latency_ms=1,
        page_type=None,
        status=403,
        body=body,
        encoding="utf-8",
        header_list=headers({}),
    )
    sample = e["bodySample"]
    assert e["bytes"] == len(body) and len(sample) <= ev.BODY_SAMPLE_CHARS
    assert sample.startswith("<html><head><title>Gusto") and sample.endswith(
        "window._cf_chl_opt={}</script></body></html>"
    )
    assert "\ufffd" not in sample


def test_a_decoded_page_gives_the_same_sample_and_title_as_its_bytes():
    body = (
        "<html><head><title> Prix\n réduit </title></head><body>" + "é" * 100_000 + "<i>fin</i></body></html>"
    ).encode()
    args = dict(
        source="crawlee-py",
        url="https://a.example.com/",
        route={},
        latency_ms=1,
        page_type=None,
        status=200,
        body=body,
        encoding="utf-8",
        header_list=headers({}),
    )
    from_bytes = ev.response_event(**args)
    from_text = ev.response_event(**args, text=body.decode("utf-8"))
    assert (
        from_text["bodySample"] == from_bytes["bodySample"]
        and from_text["title"] == from_bytes["title"] == "Prix réduit"
    )
    assert from_text["bytes"] == len(body)


def test_response_event_survives_bad_bytes_and_unknown_encodings():
    e = ev.response_event(
        source="scrapy",
        url="http://a.example.com/",
        route={},
        latency_ms=1,
        page_type=None,
        status=200,
        body=b"\xff\xfe<title>\xc3</title>",
        encoding="no-such-codec",
        header_list=headers({"server": [b"\xe9t\xe9"]}),
    )
    assert "\ufffd" in e["bodySample"] and e["headers"]["server"] == "\xe9t\xe9"
    assert "retries" not in e and "canary" not in e and "pageType" not in e


def test_exception_event_and_unique_ids():
    a = ev.exception_event(
        url="http://a.example.com/",
        source="scrapy",
        retries=1,
        route={},
        latency_ms=5,
        page_type="p",
        exc=terr.TimeoutError(),
    )
    b = ev.exception_event(
        source="scrapy", url="http://a.example.com/", route={}, latency_ms=5, page_type="p", exc=terr.TimeoutError()
    )
    assert a["networkError"] == "timeout" and "status" not in a and a["retries"] == 1
    assert a["eventId"] != b["eventId"]


def test_extraction_record_checks_like_the_api():
    assert ev.extraction_record("ok", 3) == {"result": "ok", "validRecords": 3}
    assert ev.extraction_record("missing_fields", 0, ["price"]) == {
        "result": "missing_fields",
        "validRecords": 0,
        "missingFields": ["price"],
    }
    with pytest.raises(ValueError, match="^result: must be one of"):
        ev.extraction_record("fine")
    with pytest.raises(ValueError, match='^missing_fields: lists fields but result is "ok"'):
        ev.extraction_record("ok", 1, ["price"])
    with pytest.raises(ValueError, match='^valid_records: is 2 but result is "empty"'):
        ev.extraction_record("empty", 2)


def test_crawlee_pythons_http_client_errors_map_by_name():
    # impit and httpx (crawlee-python's HTTP clients) are not installed here: classes of the same names stand in.
    def named(name: str) -> BaseException:
        return type(name, (Exception,), {})()

    assert ev.exception_kind(named("RemoteProtocolError")) == "connection_reset"
    assert ev.exception_kind(named("ReadTimeout")) == "timeout"
    assert ev.exception_kind(named("ConnectError")) == "connection_reset"
