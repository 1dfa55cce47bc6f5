/**
 * What the demo prints as it happens: each change of a site's controls as the crawler received it, a
 * route alert or a wait for a person as the loop reports it, what to type next, and — once every site
 * has shown its outcome — where to look: the web console first (a person decides there), the Temporal UI too.
 */
import type { SiteControls } from '@target-health/crawler/controls/types';
import type { SiteHealthState } from '../../loop/messages';

export interface NarratorOptions {
  say(line: string): void;
  clock(): string;
  uiUrl: string | undefined;
  /** The web console the stack's API serves (`<api>/console`). */
  consoleUrl: string;
  namespace: string;
  cliSettingsPath: string;
  hosts: { shop: string; news: string; travel: string; calm: string };
  nominal: number;
  /** The hostile site's admin origin (http://127.0.0.1:port). */
  siteAdmin: string;
}

export class Narrator {
  private readonly controls = new Map<string, SiteControls>();
  private readonly told = new Set<string>();
  private summarised = false;

  constructor(private readonly o: NarratorOptions) {}

  controlsChanged(c: SiteControls): void {
    const before = this.controls.get(c.site);
    this.controls.set(c.site, c);
    if (before === undefined) return; // The first record the crawler hears of: nothing changed yet.
    const changes: string[] = [];
    // The first step down from the usual concurrency, named as such: the outcome the demo promises for
    // a site that resists partly (later steps read "concurrency 3→2").
    if (!c.paused && before.concurrencyLimit >= this.o.nominal && c.concurrencyLimit < this.o.nominal)
      changes.push('THROTTLED');
    if (before.concurrencyLimit !== c.concurrencyLimit)
      changes.push(`concurrency ${before.concurrencyLimit}→${c.concurrencyLimit}`);
    if (before.revisitMultiplier !== c.revisitMultiplier)
      changes.push(`revisit ×${before.revisitMultiplier}→×${c.revisitMultiplier}`);
    if (before.paused !== c.paused)
      changes.push(c.paused ? `PAUSED${c.canaryOnly ? ' (canaries only)' : ''}` : 'resumed');
    if (before.band !== c.band) changes.push(`band ${before.band}→${c.band}`);
    if (changes.length === 0) return;
    this.o.say(`${this.o.clock()} ${c.site}: ${changes.join(', ')} — ${c.reason}`);
    this.maybeSummarise();
  }

  stateSeen(host: string, s: SiteHealthState): void {
    if (s.alerts.route && !this.told.has(`route:${host}`)) {
      this.told.add(`route:${host}`);
      const conc = s.controls ? `concurrency stays ${s.controls.concurrencyLimit}` : 'controls unchanged';
      this.o.say(
        `${this.o.clock()} ${host}: ROUTE ALERT — ` +
          `${s.routeDiagnosis?.summary ?? 'failures concentrate in some routes'}; the site is not throttled ` +
          `(${conc}, band ${s.band})`,
      );
    }
    if (s.awaitingHuman !== null && !this.told.has(`human:${host}`)) {
      this.told.add(`human:${host}`);
      const env = `set -a; . ${this.o.cliSettingsPath}; set +a`;
      this.o.say(
        [
          `${this.o.clock()} ${host}: waiting for a person (band ${s.band}). The crawler sends it canaries ` +
            `only. See what it served and decide in the console:`,
          `      ${this.o.consoleUrl}/sites/${encodeURIComponent(host)}  (then Decide)`,
          `   signed in with a token from: ${env}; npx target-health token create you --scope read,decide`,
          `   Or decide in another terminal:`,
          `      ${env}; npx target-health decide resume ${host} --who you@example.com --why "checked: the ` +
            `wall is gone"`,
          `      ${env}; npx target-health decide stop ${host} --who you@example.com --why "not worth it"`,
          `   Lift the wall first, or the loop pauses it again once it has judged a few minutes of walls:`,
          `      curl -X POST ${this.o.siteAdmin}/_admin/hosts/${host}/mode -H 'content-type: ` +
            `application/json' -d '{"kind": "normal", "latencyMs": 600}'`,
        ].join('\n'),
      );
    }
    if (
      s.awaitingHuman === null &&
      this.told.has(`human:${host}`) &&
      !this.told.has(`decided:${host}`) &&
      s.lastDecision
    ) {
      this.told.add(`decided:${host}`);
      this.o.say(`${this.o.clock()} ${host}: ${s.lastDecision.kind} decided by a person`);
    }
    if (host === this.o.hosts.calm && s.band === 'healthy') this.told.add('calm:healthy');
    this.maybeSummarise();
  }

  private maybeSummarise(): void {
    const { shop, news, travel } = this.o.hosts;
    const throttled = (this.controls.get(shop)?.concurrencyLimit ?? this.o.nominal) < this.o.nominal;
    if (
      this.summarised ||
      !throttled ||
      !this.told.has(`human:${news}`) ||
      !this.told.has(`route:${travel}`) ||
      !this.told.has('calm:healthy')
    )
      return;
    this.summarised = true;
    const ui = this.o.uiUrl ? `${this.o.uiUrl}/namespaces/${this.o.namespace}/workflows` : 'your Temporal UI';
    this.o.say(
      [
        '',
        `${this.o.clock()} All four outcomes are in — see them in the console: ${this.o.consoleUrl}/fleet ` +
          `(the loops in the Temporal UI: ${ui})`,
        `   ${shop}: throttled    ${news}: paused, waiting for a person    ${travel}: route alert, not ` +
          `throttled    ${this.o.hosts.calm}: healthy`,
        '   The crawler keeps crawling and obeying; decide for the paused site as above, or Ctrl-C to stop everything.',
        '',
      ].join('\n'),
    );
  }
}
