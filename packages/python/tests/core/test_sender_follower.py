"""The sender's retry/count behaviour and the follower's stream handling, against a small local HTTP
server standing in for the API (the real API is exercised by test/integration/scrapy-extension.test.ts)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from target_health.controls import ControlsStore
from target_health.follower import ControlsFollower
from target_health.sender import EventSender


class Api:
    """Answers scripted statuses to POST /v1/events and serves a scripted SSE stream."""

    def __init__(self):
        self.posts = []  # (headers, [event ids])
        self.script = []  # statuses for successive POSTs; then 200
        self.stream_requests = []  # Last-Event-ID of each stream request
        self.stream_bodies = []  # what successive stream requests receive (then the connection closes)
        self.hold_stream = threading.Event()  # when set: a stream stays open after its body
        self.released = threading.Event()  # ends held streams
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                events = [json.loads(line) for line in body.split("\n")]
                api.posts.append((dict(self.headers), [e["eventId"] for e in events]))
                status = api.script.pop(0) if api.script else 200
                if status == 200:
                    answer = {
                        "accepted": len(events) - 1,
                        "inserted": len(events) - 1,
                        "duplicates": 0,
                        "rejected": [{"index": 0, "errors": ["site: must be a host name"]}],
                    }
                else:
                    answer = {"error": {"code": "store_unavailable", "message": "the database is unavailable; retry"}}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 503:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                api.stream_requests.append(self.headers.get("Last-Event-ID"))
                body = api.stream_bodies.pop(0) if api.stream_bodies else None
                if body is None:
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(body.encode())
                self.wfile.flush()
                if api.hold_stream.is_set():
                    api.released.wait(60)  # an open stream, as the API's: heartbeats aside, silent

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def api():
    a = Api()
    yield a
    a.released.set()
    a.server.shutdown()


def wait_for(cond, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_sender_resends_the_same_batch_after_503_and_counts_rejections(api, caplog):
    api.script = [503, 503]
    sender = EventSender(api.url, "th_test", batch_size=3, interval=0.05, max_backoff=0.05)
    sender.start()
    for i in range(3):
        assert sender.offer({"eventId": f"e{i}", "site": "a.example.com"})
    wait_for(lambda: sender.counts.sent == 2, "the batch to be accepted")
    counts = sender.close(5)
    assert [ids for _, ids in api.posts] == [["e0", "e1", "e2"]] * 3  # the same batch, same ids
    assert api.posts[0][0]["Authorization"] == "Bearer th_test"
    assert api.posts[0][0]["Content-Type"] == "application/x-ndjson"
    assert (counts.sent, counts.rejected, counts.retries, counts.dropped) == (2, 1, 2, 0)
    assert "event e0 refused: site: must be a host name" in caplog.text


def test_a_full_queue_drops_and_counts_without_blocking():
    sender = EventSender("http://127.0.0.1:9", "t", max_queue=2)  # never started: nothing drains the queue
    started = time.monotonic()
    results = [sender.offer({"eventId": str(i)}) for i in range(5)]
    assert time.monotonic() - started < 0.5
    assert results == [True, True, False, False, False] and sender.counts.dropped == 3


def test_close_gives_up_at_its_deadline_when_the_api_is_down():
    sender = EventSender("http://127.0.0.1:9", "t", interval=0.01, max_backoff=0.05)  # nothing listens on port 9
    sender.start()
    sender.offer({"eventId": "a"})
    sender.offer({"eventId": "b"})
    counts = sender.close(0.5)
    assert counts.dropped == 2 and counts.sent == 0 and "ConnectionRefusedError" in (counts.last_error or "")


def record(version, **kw):
    return {
        "site": "a.example.com",
        "concurrencyLimit": 8,
        "revisitMultiplier": 1,
        "paused": False,
        "canaryOnly": False,
        "effectiveCostMultiplier": 1,
        "band": "healthy",
        "reason": "r",
        "version": version,
        "updatedAt": "2026-11-30T20:41:07.120Z",
        **kw,
    }


def test_follower_applies_snapshot_and_changes_resumes_with_last_event_id_and_keeps_controls_through_outages(api):
    api.stream_bodies = [
        "retry: 1000\n\nid: 10\nevent: snapshot\ndata: "
        + json.dumps({"sites": [record(3)]})
        + "\n\n: heartbeat\n\nid: 11\nevent: controls\ndata: "
        + json.dumps(record(4, paused=True))
        + "\n\n",
        None,  # the API is down for one attempt
        "id: 12\nevent: controls\ndata: " + json.dumps(record(5, concurrencyLimit=2)) + "\n\n",
    ]
    store = ControlsStore()
    follower = ControlsFollower(api.url, "t", store)
    follower.start()
    wait_for(lambda: len(api.stream_requests) >= 2, "a reconnect")
    assert follower.ready.is_set()
    assert store.get("a.example.com").paused  # kept while the API is down (fail-safe)
    wait_for(lambda: store.get("a.example.com").version == 5, "the change after the outage", timeout=15)
    follower.stop()
    assert api.stream_requests[:3] == [None, "11", "11"]
    assert store.get("a.example.com").concurrency_limit == 2


def test_close_sends_at_once_without_waiting_out_the_batch_interval(api):
    sender = EventSender(api.url, "t", batch_size=100, interval=30)
    sender.start()
    sender.offer({"eventId": "a", "site": "a.example.com"})
    sender.offer({"eventId": "b", "site": "a.example.com"})
    time.sleep(0.1)  # the thread now waits for more events (up to the 30 s interval)
    started = time.monotonic()
    counts = sender.close(10)
    # Woken by the close: the batch went out, and the thread had ended when close() returned.
    assert not sender._thread.is_alive()
    assert [ids for _, ids in api.posts] == [["a", "b"]]
    assert counts.dropped == 0
    assert time.monotonic() - started < 5


def test_stop_ends_the_follower_thread_while_its_stream_is_open(api):
    # The API's stream ends with the connection (no length): http.client lets go of the connection's
    # socket once the response starts, and stop() must still reach the blocked read.
    api.hold_stream.set()
    api.stream_bodies = ["id: 1\nevent: snapshot\ndata: " + json.dumps({"sites": [record(1)]}) + "\n\n"]
    store = ControlsStore()
    follower = ControlsFollower(api.url, "t", store)
    follower.start()
    wait_for(follower.ready.is_set, "the snapshot")
    started = time.monotonic()
    follower.stop()
    assert not follower._thread.is_alive()  # ended, not left behind by the join's timeout
    assert time.monotonic() - started < 1.5
