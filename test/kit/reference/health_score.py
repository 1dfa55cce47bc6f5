#!/usr/bin/env python3
"""Reference health score: the seed's Python (seed/target-health-score.es.txt), kept as the oracle.

Reads NDJSON cases on stdin, one per line:
    {"current": W, "baseline": W, "weights"?: {...}, "caps"?: {"rateExcess", "latencyMultiple"}, "minRequests"?: n}
with W = {"requests", "hardBlocks", "challenges", "softBlocks", "p95LatencyMs"} (other keys ignored),
and prints one NDJSON line per case: {"score": int | null, "reasons": [...]}.

The differential test (test/unit/scoring/reference-diff.test.ts) runs thousands of generated cases
through this script and through the TypeScript engine (library and `target-health score --json`) and
requires identical output.

Two deliberate, documented departures from the seed's text, neither changing its arithmetic:
1. `sum()` is pinned to a plain left fold. Since Python 3.12, built-in `sum()` of floats uses
   compensated (Neumaier) summation, so the seed's own output depends on the interpreter version in
   the last bit — enough to flip `round()` on a sum that lands next to x.5. The product specifies the
   plain fold (0 + hard_block + challenge + soft_block + latency), which is what `sum()` did before 3.12.
2. A parameterised copy (`health_score_with`) serves cases that override weights, caps or the minimum;
   with the defaults it performs exactly the seed's operations (`/ 0.20`, `/ (3 - 1)` = `/ 2`).
Cases without overrides go through the seed's `health_score` itself.
"""
import json
import sys
from dataclasses import dataclass


def sum(values, start=0):  # noqa: A001 - deliberately shadows the builtin, see the module docstring
    total = start
    for value in values:
        total = total + value
    return total


# ---- the seed, verbatim ------------------------------------------------------------------------

@dataclass
class Window:
    requests: int
    hard_blocks: int  # 403, 429, connection resets
    challenges: int  # CAPTCHA or interstitial pages
    soft_blocks: int  # 200 OK carrying a block page or an empty result
    p95_latency_ms: float


MIN_REQUESTS = 50
WEIGHTS = {"hard_block": 35, "challenge": 25, "soft_block": 25, "latency": 15}


def signals(w):
    n = max(1, w.requests)
    return {
        "hard_block": w.hard_blocks / n,
        "challenge": w.challenges / n,
        "soft_block": w.soft_blocks / n,
        "latency": w.p95_latency_ms,
    }


def badness(name, now, base):
    if name == "latency":
        # Full penalty at three times the site's own normal latency.
        return min(1.0, max(0.0, (now / max(base, 1.0) - 1) / 2))
    # Full penalty at 20 percentage points above the site's own normal rate.
    return min(1.0, max(0.0, (now - base) / 0.20))


def health_score(current, baseline):
    if current.requests < MIN_REQUESTS:
        return None, ["not enough requests to judge"]
    now, base = signals(current), signals(baseline)
    penalty = {k: w * badness(k, now[k], base[k]) for k, w in WEIGHTS.items()}
    score = round(100 - sum(penalty.values()))
    reasons = [k for k, p in sorted(penalty.items(), key=lambda kv: -kv[1]) if p >= 1]
    return score, reasons


# ---- the same with configurable weights, caps and minimum ---------------------------------------

def badness_with(name, now, base, rate_excess, latency_multiple):
    if name == "latency":
        return min(1.0, max(0.0, (now / max(base, 1.0) - 1) / (latency_multiple - 1)))
    return min(1.0, max(0.0, (now - base) / rate_excess))


def health_score_with(current, baseline, weights, rate_excess, latency_multiple, min_requests):
    if current.requests < min_requests:
        return None, ["not enough requests to judge"]
    now, base = signals(current), signals(baseline)
    penalty = {k: w * badness_with(k, now[k], base[k], rate_excess, latency_multiple) for k, w in weights.items()}
    score = round(100 - sum(penalty.values()))
    reasons = [k for k, p in sorted(penalty.items(), key=lambda kv: -kv[1]) if p >= 1]
    return score, reasons


# ---- NDJSON driver --------------------------------------------------------------------------------

def window(w):
    return Window(w["requests"], w["hardBlocks"], w["challenges"], w["softBlocks"], w["p95LatencyMs"])


def run(case):
    current, baseline = window(case["current"]), window(case["baseline"])
    if not any(k in case for k in ("weights", "caps", "minRequests")):
        return health_score(current, baseline)
    weights = dict(WEIGHTS)  # keeps the seed's key order, which breaks ties
    weights.update(case.get("weights", {}))
    caps = case.get("caps", {})
    return health_score_with(
        current,
        baseline,
        weights,
        caps.get("rateExcess", 0.20),
        caps.get("latencyMultiple", 3),
        case.get("minRequests", MIN_REQUESTS),
    )


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        score, reasons = run(json.loads(line))
        print(json.dumps({"score": score, "reasons": reasons}))


if __name__ == "__main__":
    main()
