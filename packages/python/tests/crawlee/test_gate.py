"""The request manager's gate over a real crawlee RequestQueue (in memory): held, released, limited, dropped."""

from __future__ import annotations

import asyncio

from crawlee import Request
from crawlee.storage_clients import MemoryStorageClient
from crawlee.storages import RequestQueue

from target_health.controls import ControlsStore
from target_health.crawlee import META_CANARY, ControlledRequestManager


def controls(site: str, version: int, **change: object) -> dict[str, object]:
    record: dict[str, object] = {
        "site": site,
        "concurrencyLimit": 8,
        "revisitMultiplier": 1,
        "paused": False,
        "canaryOnly": False,
        "effectiveCostMultiplier": 1,
        "band": "healthy",
        "reason": "test",
        "version": version,
    }
    record.update(change)
    return record


async def gate(store: ControlsStore) -> ControlledRequestManager:
    queue = await RequestQueue.open(name=f"q{id(store)}", storage_client=MemoryStorageClient())
    return ControlledRequestManager(store, inner=queue)


def test_a_paused_site_is_held_canaries_go_and_a_resume_releases_it() -> None:
    async def run() -> None:
        store = ControlsStore()
        store.apply(controls("a.example", 1, paused=True, canaryOnly=True, band="resisting"))
        manager = await gate(store)
        await manager.add_requests(
            [
                Request.from_url("http://a.example/1"),
                Request.from_url("http://a.example/c", user_data={META_CANARY: True}),
                Request.from_url("http://b.example/1"),
            ],
            wait_for_all_requests_to_be_added=True,
        )
        got = [await manager.fetch_next_request() for _ in range(3)]
        assert sorted(r.url for r in got if r is not None) == ["http://a.example/c", "http://b.example/1"]
        for r in got:
            if r is not None:
                await manager.mark_request_as_handled(r)
        # Only the held request is left: nothing to run now, but the crawl is not finished.
        assert manager.held == 1 and await manager.is_empty() and not await manager.is_finished()
        store.apply(controls("a.example", 2))
        assert not await manager.is_empty()
        released = await manager.fetch_next_request()
        assert released is not None and released.url == "http://a.example/1"
        await manager.mark_request_as_handled(released)
        assert await manager.is_finished()

    asyncio.run(run())


def test_the_concurrency_limit_holds_a_sites_next_request_until_one_ends_and_a_stop_drops() -> None:
    async def run() -> None:
        store = ControlsStore()
        store.apply(controls("a.example", 1, concurrencyLimit=1, band="degrading"))
        manager = await gate(store)
        await manager.add_requests(
            [Request.from_url(f"http://a.example/{i}") for i in range(3)], wait_for_all_requests_to_be_added=True
        )
        first = await manager.fetch_next_request()
        assert (
            first is not None
            and await manager.fetch_next_request() is None
            and manager.site_in_flight("a.example") == 1
        )
        await manager.reclaim_request(first)  # a retry frees the place too
        assert manager.site_in_flight("a.example") == 0
        store.apply(controls("a.example", 2, band="stopped"))
        assert await manager.fetch_next_request() is None  # held and queued requests are dropped, none sent
        assert manager.held == 0 and await manager.is_finished()

    asyncio.run(run())
