"""The controls a crawler obeys (docs/api.md "Controls"), kept per site, and what they mean for one request.

`ControlsStore` is written by the follower thread and read on the reactor thread: it applies a record only
when its `version` is newer than the one held (the stream may repeat a change in a snapshot), and keeps
the last known record when the API is unreachable (the fail-safe: a crawler that loses the API keeps
obeying what it was last told rather than running at full speed).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping

Verdict = Literal["go", "hold", "drop"]
BANDS = ("learning", "healthy", "degrading", "resisting", "stopped")


@dataclass(frozen=True)
class SiteControls:
    site: str
    concurrency_limit: int
    revisit_multiplier: float
    paused: bool
    canary_only: bool
    effective_cost_multiplier: float
    band: str
    reason: str
    version: int
    updated_at: str

    @staticmethod
    def from_api(record: Mapping[str, Any]) -> "SiteControls":
        """The API's record (camelCase JSON); a malformed one is a ValueError naming the field."""

        def need(name: str, kind: type | tuple[type, ...]) -> Any:
            value = record.get(name)
            if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
                raise ValueError(f"controls.{name}: expected {kind}, got {value!r}")
            return value

        band = need("band", str)
        if band not in BANDS:
            raise ValueError(f"controls.band: expected one of {', '.join(BANDS)}, got {band!r}")
        return SiteControls(
            site=need("site", str),
            concurrency_limit=max(1, int(need("concurrencyLimit", int))),
            revisit_multiplier=max(1.0, float(need("revisitMultiplier", (int, float)))),
            paused=need("paused", bool),
            canary_only=need("canaryOnly", bool),
            effective_cost_multiplier=float(need("effectiveCostMultiplier", (int, float))),
            band=band,
            reason=str(record.get("reason", "")),
            version=int(need("version", int)),
            updated_at=str(record.get("updatedAt", "")),
        )


def verdict(controls: SiteControls | None, *, canary: bool, unknown_site: str = "allow") -> Verdict:
    """What to do with one request now.

    - band `stopped`: drop (the loop or a person stopped the site: no crawling at all);
    - paused: hold production requests; canaries go only when `canaryOnly` (the loop probes with them);
    - `canaryOnly` alone: likewise, only canaries go;
    - no record known: `unknown_site` ("allow", or "pause" to hold until a record arrives).
    """
    if controls is None:
        return "hold" if unknown_site == "pause" else "go"
    if controls.band == "stopped":
        return "drop"
    if controls.paused or controls.canary_only:
        return "go" if canary and controls.canary_only else "hold"
    return "go"


def slot_settings(controls: SiteControls, base_delay: float) -> tuple[int, float]:
    """The downloader slot's concurrency and delay for a site: at most `concurrencyLimit` in flight, and
    the delay between requests stretched by the revisit multiplier (Scrapy has no revisit schedule of its
    own; the slot delay is its per-site pace)."""
    return controls.concurrency_limit, base_delay * controls.revisit_multiplier


class ControlsStore:
    """The last known controls per site; thread-safe; listeners are told of each newer record."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sites: dict[str, SiteControls] = {}
        self._listeners: list[Callable[[SiteControls], None]] = []

    def get(self, site: str) -> SiteControls | None:
        with self._lock:
            return self._sites.get(site)

    def sites(self) -> list[str]:
        with self._lock:
            return list(self._sites)

    def on_change(self, listener: Callable[[SiteControls], None]) -> None:
        self._listeners.append(listener)

    def apply(self, record: Mapping[str, Any]) -> bool:
        """Takes a record when newer than the one held; returns whether it did."""
        controls = SiteControls.from_api(record)
        with self._lock:
            held = self._sites.get(controls.site)
            if held is not None and held.version >= controls.version:
                return False
            self._sites[controls.site] = controls
        for listener in list(self._listeners):
            listener(controls)
        return True
