/**
 * `target-health markers test <dir> [--json]`: a user's own labelled pages (a directory with a
 * manifest.json in the corpus format, or files named `<class>--<name>.html`; client/markers/labelled-pages.ts)
 * run through the classifier in the three modes (core/signals/evaluate.ts): recall and precision per vendor.
 * `target-health markers check <file>`: validates a marker file (core/signals/marker-file.ts) and says what it
 * adds, replaces and disables. Both use TARGET_HEALTH_MARKERS (test) as the server would.
 *
 * Exit codes: 0 done (test) or valid (check); 2 bad input — one line naming the file and the field.
 */
import type { Command } from 'commander';
import { readMarkerFile } from '../../server/config/marker-catalogue';
import { UserError } from '../../core/common/user-error';
import { compileClassifier } from '@target-health/crawler/events/classify';
import { evaluate } from '../../core/signals/evaluate';
import { commandCatalogue } from '../markers/catalogue';
import { readLabelledPages } from '../markers/labelled-pages';
import { formatMisses, formatRecallPrecision } from '../markers/report';

export function registerMarkersCommand(program: Command): void {
  const markers = program
    .command('markers')
    .description('test the classifier on your own labelled pages; check a marker file');

  markers
    .command('test')
    .description(
      'recall and precision per vendor on a directory of labelled pages (manifest.json, or <class>--<name>.html files)',
    )
    .argument('<dir>', 'the directory of pages')
    .option('--json', 'print the evaluation as JSON')
    .action((dir: string, options: { json?: boolean }) => {
      const pages = readLabelledPages(dir);
      const catalogue = commandCatalogue();
      const evaluation = evaluate(pages, compileClassifier({}, catalogue));
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ markers: catalogue.source, ...evaluation })}\n`);
        return;
      }
      process.stdout.write(
        `${pages.length} pages from ${dir}; markers: ${catalogue.source} (${catalogue.markers.length})\n`,
      );
      for (const mode of evaluation.modes) {
        process.stdout.write(`\n${formatRecallPrecision(mode)}`);
        const misses = formatMisses(mode, 20);
        if (misses !== '') process.stdout.write(`got wrong:\n${misses}`);
      }
    });

  markers
    .command('check')
    .description(
      'validate a marker file (as TARGET_HEALTH_MARKERS would read it) and list what it adds, replaces and disables',
    )
    .argument('<file>', 'the marker file (JSON)')
    .action((file: string) => {
      const result = readMarkerFile(file);
      if (!result.ok)
        throw new UserError(
          `${file}: ` +
            (`${result.errors.slice(0, 5).join('; ')}` +
              `${result.errors.length > 5 ? ` (and ${result.errors.length - 5} more)` : ''}`),
        );
      const { added, replaced, disabled } = result.summary;
      const list = (ids: string[]) => (ids.length === 0 ? 'none' : ids.join(', '));
      process.stdout.write(
        `${file}: valid, ${result.catalogue.markers.length} markers in all\n  added:    ${list(added)}\n  ` +
          `replaced: ${list(replaced)}\n  disabled: ${list(disabled)}\n`,
      );
    });
}
