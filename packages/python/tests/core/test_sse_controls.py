"""The SSE parser, and applying controls by version and what they mean for a request."""

import pytest

from target_health.controls import ControlsStore, SiteControls, slot_settings, verdict
from target_health.sse import SseParser


def record(**kw):
    base = {
        "site": "a.example.com",
        "concurrencyLimit": 16,
        "revisitMultiplier": 1,
        "paused": False,
        "canaryOnly": False,
        "effectiveCostMultiplier": 1,
        "band": "healthy",
        "reason": "nominal",
        "version": 1,
        "updatedAt": "2026-11-30T20:41:07.120Z",
    }
    return {**base, **kw}


def test_sse_parser_events_ids_comments_and_retry():
    p = SseParser()
    stream = (
        'retry: 1000\r\n\r\nid: 7\nevent: snapshot\ndata: {"sites":\ndata: []}\n\n'
        ': heartbeat\n\nevent: controls\ndata:{"x":1}\n\n'
    )
    events = p.feed(stream)
    assert [(e.event, e.data, e.id) for e in events] == [
        ("snapshot", '{"sites":\n[]}', "7"),
        ("controls", '{"x":1}', "7"),
    ]
    assert p.retry_ms == 1000 and p.comments == 1 and p.last_event_id == "7"


def test_sse_parser_line_by_line_keeps_state_between_lines():
    p = SseParser()
    assert p.feed_line("id: 42") is None
    assert p.feed_line("data: a") is None
    ev = p.feed_line("")
    assert ev is not None and ev.event == "message" and ev.data == "a" and ev.id == "42"
    assert p.feed_line("") is None  # a blank line without data dispatches nothing


def test_store_applies_only_newer_versions_and_tells_listeners():
    store = ControlsStore()
    seen = []
    store.on_change(seen.append)
    assert store.apply(record(version=2, concurrencyLimit=4))
    assert not store.apply(record(version=2, concurrencyLimit=9))
    assert not store.apply(record(version=1, paused=True))
    assert store.apply(record(version=5, paused=True))
    # Each record is whole (not a delta): version 5 replaces version 2 entirely.
    assert store.get("a.example.com").paused and store.get("a.example.com").concurrency_limit == 16
    assert [c.version for c in seen] == [2, 5]


def test_a_malformed_record_names_the_field():
    with pytest.raises(ValueError, match="^controls.concurrencyLimit"):
        SiteControls.from_api(record(concurrencyLimit="many"))
    with pytest.raises(ValueError, match="^controls.band"):
        SiteControls.from_api(record(band="angry"))


@pytest.mark.parametrize(
    "fields, canary, expected",
    [
        ({}, False, "go"),
        ({"paused": True}, False, "hold"),
        ({"paused": True}, True, "hold"),
        ({"paused": True, "canaryOnly": True}, False, "hold"),
        ({"paused": True, "canaryOnly": True}, True, "go"),
        ({"canaryOnly": True}, True, "go"),
        ({"canaryOnly": True}, False, "hold"),
        ({"band": "stopped"}, True, "drop"),
        ({"band": "stopped", "paused": True}, False, "drop"),
    ],
)
def test_verdict(fields, canary, expected):
    assert verdict(SiteControls.from_api(record(**fields)), canary=canary) == expected


def test_unknown_sites_follow_the_fail_safe_setting():
    assert verdict(None, canary=False) == "go"
    assert verdict(None, canary=False, unknown_site="pause") == "hold"


def test_slot_settings_scale_the_delay_by_the_revisit_multiplier():
    assert slot_settings(SiteControls.from_api(record(concurrencyLimit=3, revisitMultiplier=2.5)), 0.4) == (3, 1.0)
