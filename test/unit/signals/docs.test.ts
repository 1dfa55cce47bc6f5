/** Keeps docs/events.md and docs/classification.md honest: examples parse, the catalogue is complete. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BUILT_IN_MARKERS,
  classifyOutcome,
  parseEventLine,
  parseSiteClassifierConfig,
} from '@target-health/crawler/events';
import { parseMarkerFile } from '../../../core/signals/marker-file';

const DOCS = join(__dirname, '..', '..', '..', 'docs');
const read = (name: string): string => readFileSync(join(DOCS, name), 'utf8');
const jsonBlocks = (markdown: string): string[] =>
  [...markdown.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

describe('docs/events.md', () => {
  const lines = jsonBlocks(read('events.md')).flatMap((block) => block.split('\n').filter((l) => l.trim() !== ''));

  it('every example event is valid', () => {
    expect(lines.length).toBeGreaterThanOrEqual(7);
    lines.forEach((line, i) => {
      const result = parseEventLine(line, i + 1);
      expect(result.ok ? [] : result.errors).toEqual([]);
    });
  });

  it('examples classify as the text says', () => {
    const outcomes = lines.map((line, i) => {
      const result = parseEventLine(line, i + 1);
      if (!result.ok) throw new Error(result.errors.join('\n'));
      return classifyOutcome(result.event).outcome;
    });
    expect(outcomes).toEqual(['ok', 'challenge', 'soft_block', 'hard_block', 'error', 'ok', 'challenge']);
  });
});

describe('docs/classification.md', () => {
  const doc = read('classification.md');

  it('lists every built-in marker', () => {
    for (const marker of BUILT_IN_MARKERS)
      expect(doc).toContain(`| \`${marker.id}\` | ${marker.vendor} | ${marker.kind} |`);
  });

  it('the example configuration is valid', () => {
    const [config] = jsonBlocks(doc);
    expect(parseSiteClassifierConfig(JSON.parse(config ?? 'null'))).toMatchObject({ ok: true });
  });

  it('the example marker file is valid', () => {
    const file = jsonBlocks(doc).find((block) => block.includes('"version": 1') && block.includes('"disable"'));
    expect(parseMarkerFile(JSON.parse(file ?? 'null'))).toMatchObject({ ok: true });
  });
});
