/**
 * Which version of each site's controls one stream has already given its client (pure). The controls
 * stream sends a snapshot and then changes; a change's notice can reach the feed after the snapshot read
 * its row (the snapshot's sequence number is taken before the read), so the same version would go out
 * twice. A change is sent only when its version is newer than what the client holds.
 */
export class SentVersions {
  private readonly held = new Map<string, number>();

  /** A snapshot went out: the client holds exactly these versions now. */
  reset(records: ReadonlyArray<{ site: string; version: number }>): void {
    this.held.clear();
    for (const r of records) this.held.set(r.site, r.version);
  }

  /** Whether `version` of `site` is news to the client; if it is, the client holds it from now on. */
  take(site: string, version: number): boolean {
    if (version <= (this.held.get(site) ?? 0)) return false;
    this.held.set(site, version);
    return true;
  }
}
