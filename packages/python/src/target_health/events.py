"""Building request-outcome events (docs/events.md) from what any crawler knows of an attempt: its URL,
route, latency, status, headers and body, or the exception it ended with.

Pure functions (no crawler, no I/O) so they are unit-tested directly and shared by every integration. The
event's fields and limits mirror `packages/crawler/src/events/event.ts`: the API refuses an unknown field, so
nothing here invents one.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import secrets
import time
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import unquote, urlsplit

# The classifier reads at most this many characters of a body (packages/crawler/src/events/event.ts BODY_SAMPLE_CHARS).
BODY_SAMPLE_CHARS = 64 * 1024
MAX_TITLE_CHARS = 1024
MAX_HEADER_VALUE = 4096
# The response headers the classifier's markers read (packages/crawler/src/events/markers.ts); others are not sent.
CLASSIFIER_HEADERS = (
    "server",
    "cf-mitigated",
    "set-cookie",
    "x-datadome",
    "x-iinfo",
    "x-amzn-waf-action",
    "location",
    "x-kpsdk-ct",
    "x-cachewall-action",
    "x-vercel-mitigated",
)
NETWORK_ERRORS = ("connection_reset", "timeout", "dns", "tls", "proxy", "other")
EXTRACTION_RESULTS = ("ok", "missing_fields", "schema_mismatch", "empty")

# The marks a user puts on a request: Scrapy's `request.meta`, crawlee-python's `Request.user_data`
# (docs/crawlers-scrapy.md, docs/crawlers-crawlee-python.md). One spelling for both crawlers.
META_CANARY = "target_health_canary"
META_PAGE_TYPE = "target_health_page_type"
META_ROUTE = "target_health_route"

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$")
_COUNTRY = re.compile(r"^[A-Za-z]{2}$")
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
_TITLE_TEXT = re.compile(r"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)


def site_of(url: str) -> str:
    """The crawled host of a URL, as the API spells a site: lower case, no port, no trailing dot, IDNA."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    try:
        return host.encode("idna").decode("ascii") if host and not host.isascii() else host
    except UnicodeError:
        return host


def label_or_none(value: Any) -> str | None:
    """A pool/session/page-type label the API accepts (1-64 of letters, digits, . _ : / -), or None."""
    if not isinstance(value, str):
        return None
    cleaned = re.sub(r"[^A-Za-z0-9._:/-]", "-", value.strip())[:64]
    return cleaned if _LABEL.match(cleaned) else None


def proxy_user(proxy_authorization: bytes | str | None) -> str | None:
    """The username of a `Proxy-Authorization: Basic …` header (HttpProxyMiddleware moves the proxy URL's
    credentials there, before this middleware sees the request)."""
    if not proxy_authorization:
        return None
    value = proxy_authorization.decode("latin-1") if isinstance(proxy_authorization, bytes) else proxy_authorization
    scheme, _, encoded = value.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        return (
            base64.b64decode(encoded.strip(), validate=True).decode("utf-8", errors="replace").split(":", 1)[0] or None
        )
    except (ValueError, binascii.Error):
        return None


def route_from_proxy(proxy: str | None, user: str | None = None) -> dict[str, str]:
    """The route of a proxy URL. Vendors put the pool and country in the username
    (`http://residential-de:secret@gw.example.net:8000`, also `pool-country-session-…`): the first
    part is the pool, a following two-letter part the country. Without credentials the proxy's host is
    the pool. No proxy: an empty route (direct). `user`: the username when the URL no longer has it.
    """
    if not proxy:
        return {}
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    route: dict[str, str] = {}
    user = unquote(parts.username or "") or user or ""
    if user:
        pieces = [p for p in re.split(r"[-_]", user) if p]
        if pieces:
            pool = label_or_none(pieces[0])
            if pool:
                route["pool"] = pool
            if len(pieces) > 1 and _COUNTRY.match(pieces[1]):
                route["country"] = pieces[1].upper()
    elif parts.hostname:
        pool = label_or_none(parts.hostname)
        if pool:
            route["pool"] = pool
    return route


def clean_route(route: Mapping[str, Any] | None) -> dict[str, str]:
    """Keeps only the route fields the API accepts, in the form it accepts (a bad one is left out)."""
    out: dict[str, str] = {}
    if not route:
        return out
    country = route.get("country")
    if isinstance(country, str) and _COUNTRY.match(country):
        out["country"] = country.upper()
    for key in ("pool", "session"):
        value = label_or_none(route.get(key))
        if value:
            out[key] = value
    return out


def exception_kind(exc: BaseException) -> str:
    """Maps a download exception to the event's `networkError` (packages/crawler/src/events/event.ts NETWORK_ERRORS).

    Matched by class name along the MRO so this module needs neither Twisted nor Scrapy imported, and a
    wrapped failure (ResponseNeverReceived's reasons) is looked into.
    """
    # Scrapy 2.13+ wraps Twisted's errors (DownloadFailedError from ResponseFailed, …) and keeps the
    # original as the cause: the cause says more (a TLS failure inside a failed response is "tls").
    cause = exc.__cause__
    if isinstance(cause, BaseException) and cause is not exc:
        kind = exception_kind(cause)
        if kind != "other":
            return kind
    names = {cls.__name__ for cls in type(exc).__mro__}
    module = type(exc).__module__ or ""
    if names & {"TunnelError", "ProxyError", "ProxyConnectionError"}:
        return "proxy"
    if (
        names & {"SSLError", "SSLCertVerificationError", "CertificateError"}
        or module.startswith("OpenSSL")
        or set(module.split(".")) & {"tls", "ssl", "_sslverify"}
    ):
        return "tls"
    if names & {"DNSLookupError", "CannotResolveHostError", "gaierror", "NoResolverError"}:
        return "dns"
    # httpx's and impit's (crawlee-python's HTTP clients) names are among these too.
    if names & {
        "TimeoutError",
        "DownloadTimeoutError",
        "TCPTimedOutError",
        "UserTimeoutError",
        "ServerTimeoutError",
        "timeout",
        "ConnectTimeout",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
        "TimeoutException",
    }:
        return "timeout"
    if names & {
        "ResponseNeverReceived",
        "ResponseFailed",
        "_ResponseFailed",
        "RequestTransmissionFailed",
        "DownloadFailedError",
        "ResponseDataLossError",
    }:
        # Twisted wraps the real cause in `reasons` (a list of Failures): a TLS failure stays a TLS failure.
        for reason in getattr(exc, "reasons", None) or []:
            inner = getattr(reason, "value", reason)
            if isinstance(inner, BaseException) and inner is not exc:
                kind = exception_kind(inner)
                if kind in ("tls", "timeout", "dns", "proxy"):
                    return kind
        return "connection_reset"
    if names & {
        "ConnectionLost",
        "ConnectionDone",
        "ConnectionRefusedError",
        "DownloadConnectionRefusedError",
        "ConnectError",
        "ConnectionResetError",
        "ConnectionAbortedError",
        "BrokenPipeError",
        "PotentialDataLoss",
        "RemoteProtocolError",
        "ReadError",
        "WriteError",
    }:
        return "connection_reset"
    return "other"


def _cut(text: str, limit: int) -> str:
    # Python strings are code points, so a cut never splits a character; the API replaces NUL itself.
    return text[:limit]


# Between the head and the tail of a large page's sample: the same text as SAMPLE_GAP in
# packages/crawler/src/events/text.ts.
SAMPLE_GAP = "\n[… middle of the page left out …]\n"


def _decode(raw: bytes, encoding: str | None) -> str:
    try:
        return raw.decode(encoding or "utf-8", errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")


def body_sample(body: bytes, encoding: str | None) -> str:
    """What the classifier needs, at most 64 K characters: the whole page, or its head and its tail.

    Large site-branded block pages carry their vendor's markers in the last kilobytes, so a head-only cut reads
    them as ordinary pages (docs/classification.md, "Pages larger than the sample"). Decoded with replacement: a
    bad byte must not lose the event; only the first and last 4 bytes × 64 K are decoded.
    """
    window = BODY_SAMPLE_CHARS * 4
    if len(body) <= 2 * window:
        text = _decode(body, encoding)
    else:
        text = _decode(body[:window], encoding) + _decode(body[-window:], encoding)
    if len(text) <= BODY_SAMPLE_CHARS:
        return text
    half = (BODY_SAMPLE_CHARS - len(SAMPLE_GAP)) // 2
    return text[:half] + SAMPLE_GAP + text[-half:]


def sample_of_text(text: str) -> str:
    """body_sample for a page already decoded (Scrapy's TextResponse.text, which the spider reads too)."""
    if len(text) <= BODY_SAMPLE_CHARS:
        return text
    half = (BODY_SAMPLE_CHARS - len(SAMPLE_GAP)) // 2
    return text[:half] + SAMPLE_GAP + text[-half:]


def title_of(body: bytes, encoding: str | None) -> str | None:
    match = _TITLE.search(body[: BODY_SAMPLE_CHARS * 4])
    if not match:
        return None
    try:
        title = match.group(1).decode(encoding or "utf-8", errors="replace")
    except LookupError:
        title = match.group(1).decode("utf-8", errors="replace")
    title = " ".join(title.split())
    return _cut(title, MAX_TITLE_CHARS) or None


def title_of_text(text: str) -> str | None:
    match = _TITLE_TEXT.search(text, 0, BODY_SAMPLE_CHARS * 4)
    if not match:
        return None
    return _cut(" ".join(match.group(1).split()), MAX_TITLE_CHARS) or None


def classifier_headers(get_list: Callable[[str], Sequence[bytes | str]]) -> dict[str, str]:
    """The headers the classifier reads, repeated ones joined with a newline; undecodable bytes replaced
    and values cut, so one odd header never rejects the event."""
    out: dict[str, str] = {}
    for name in CLASSIFIER_HEADERS:
        values = [v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in (get_list(name) or [])]
        if values:
            out[name] = _cut("\n".join(values), MAX_HEADER_VALUE)
    return out


def extraction_record(
    result: str, valid_records: int | None = None, missing_fields: list[str] | None = None
) -> dict[str, Any]:
    """The event's `extraction`, checked as the API checks it (a mistake is a ValueError naming the fix)."""
    if result not in EXTRACTION_RESULTS:
        raise ValueError(f"result: must be one of {', '.join(EXTRACTION_RESULTS)} (got {result!r})")
    out: dict[str, Any] = {"result": result}
    if missing_fields:
        if result not in ("missing_fields", "schema_mismatch"):
            raise ValueError(f'missing_fields: lists fields but result is "{result}"; use result "missing_fields"')
        out["missingFields"] = [str(f)[:128] for f in missing_fields[:100] if str(f)]
    if valid_records is not None:
        if not isinstance(valid_records, int) or valid_records < 0:
            raise ValueError(f"valid_records: must be an integer >= 0 (got {valid_records!r})")
        if result == "empty" and valid_records > 0:
            raise ValueError(
                f'valid_records: is {valid_records} but result is "empty"; an empty extraction has 0 valid records'
            )
        out["validRecords"] = valid_records
    return out


# A random part per process and a counter: unique across crawlers (96 random bits) at a fraction of
# uuid4's cost per event. The id starts with the crawler's name, so the store shows who sent an event.
_ID_RANDOM = secrets.token_hex(12)
_ids = itertools.count(1)


def new_event_id(source: str) -> str:
    """One id per attempt: resending a batch after a timeout or a 503 stores each event once."""
    return f"{source}-{_ID_RANDOM}-{next(_ids)}"


def now_ms(now: float | None = None) -> int:
    """The event's `ts`: epoch milliseconds, the form the store keeps (docs/events.md)."""
    return int((time.time() if now is None else now) * 1000)


def base_event(
    *,
    source: str,
    url: str,
    route: Mapping[str, Any],
    latency_ms: float,
    page_type: str | None,
    canary: bool = False,
    retries: int | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """`source`: the crawler's name, the event id's prefix ("scrapy", "crawlee-py"); `retries`: how many
    attempts of the same request came before this one."""
    event: dict[str, Any] = {
        "eventId": new_event_id(source),
        "ts": now_ms(now),
        "site": site_of(url),
        "route": clean_route(route),
        "latencyMs": round(max(0.0, min(latency_ms, 86_400_000.0)), 3),
    }
    if isinstance(retries, int) and not isinstance(retries, bool) and retries > 0:
        event["retries"] = retries
    if canary:
        event["canary"] = True
    pt = label_or_none(page_type)
    if pt:
        event["pageType"] = pt
    return event


def response_event(
    *,
    source: str,
    url: str,
    route: Mapping[str, Any],
    latency_ms: float,
    page_type: str | None,
    status: int,
    body: bytes,
    encoding: str | None,
    header_list: Callable[[str], Sequence[bytes | str]],
    canary: bool = False,
    retries: int | None = None,
    now: float | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """`text`: the body as the response decoded it (a Scrapy TextResponse's `text`, cached and read by
    the spider too): the sample and the title are cut from it instead of decoding the body once more."""
    event = base_event(
        source=source,
        url=url,
        route=route,
        latency_ms=latency_ms,
        page_type=page_type,
        canary=canary,
        retries=retries,
        now=now,
    )
    event["status"] = status if 100 <= status <= 999 else 599
    event["bytes"] = len(body)
    headers = classifier_headers(header_list)
    if headers:
        event["headers"] = headers
    if body:
        event["bodySample"] = body_sample(body, encoding) if text is None else sample_of_text(text)
        title = title_of(body, encoding) if text is None else title_of_text(text)
        if title:
            event["title"] = title
    return event


def exception_event(
    *,
    source: str,
    url: str,
    route: Mapping[str, Any],
    latency_ms: float,
    page_type: str | None,
    exc: BaseException,
    canary: bool = False,
    retries: int | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    event = base_event(
        source=source,
        url=url,
        route=route,
        latency_ms=latency_ms,
        page_type=page_type,
        canary=canary,
        retries=retries,
        now=now,
    )
    event["networkError"] = exception_kind(exc)
    return event
