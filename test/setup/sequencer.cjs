/**
 * The order test files start in, which sets how long the whole run takes on two workers: the longest
 * files must start first, or the run ends with one worker idle while the other finishes an end-to-end
 * crawl. Jest knows each file's last duration once it has run on this machine (the per-machine cache,
 * jest.config.js) and then starts the longest first; this keeps that. Without durations (the first run
 * on a machine, or a file new since) Jest would go by file size, which starts 60 KB unit tables before
 * a 4-minute crawl: here a file without a duration is estimated by its tier (services, processes and real
 * time first), then by size. Files that failed last time still go first, as Jest does.
 */
const Sequencer = require('@jest/test-sequencer').default;

/**
 * A file's duration when Jest has none: a typical file of its tier (seconds to minutes of services and real
 * time above, fractions of a second for unit tests), plus a millisecond per KB so larger files go first.
 */
const TIER_ESTIMATE_MS = { cluster: 45_000, faults: 40_000, integration: 20_000, 'time-skipping': 10_000, unit: 1_000 };

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const estimate = (t) => {
      const known = this.time(t);
      if (known != null) return known;
      const tier = TIER_ESTIMATE_MS[t.context.config.displayName?.name] ?? TIER_ESTIMATE_MS.unit;
      return tier + (t.context.hasteFS.getSize(t.path) ?? 0) / 1024;
    };
    const keyed = tests.map((t) => ({ t, failed: this.hasFailed(t), ms: estimate(t) }));
    keyed.sort((a, b) => Number(b.failed) - Number(a.failed) || b.ms - a.ms);
    return keyed.map((k) => k.t);
  }
}

module.exports = SlowFirstSequencer;
