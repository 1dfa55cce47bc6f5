/**
 * Reads a directory of labelled pages for the evaluation core (core/signals/evaluate.ts), in either of two forms:
 * - a `manifest.json` in the corpus format (test/fixtures/real-pages/README.md): `{"version": 1, "pages":
 *   [{"file": "x.html", "label": {"class": "challenge", "vendor": "Cloudflare", "status"?: 403,
 *   "typicalStatus"?: 403, "headers"?: {}}}, …]}` — other entry fields (provenance, notes) are ignored;
 * - no manifest: every `<class>--<anything>.html` file, labelled by its name (`challenge--shop-verify.html`,
 *   `ok--home.html`), the vendor being the part after `--` up to the next `--` or the extension.
 * Problems are {@link UserError}s naming the file and the field.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../core/common/user-error';
import { describeValue, issueLines } from '@target-health/crawler/events/zod-issues';
import { LABEL_CLASSES, type LabelClass, type LabelledPage } from '../../core/signals/evaluate';

const status = z.number().int().min(100).max(999);

const Label = z.strictObject({
  class: z.enum(LABEL_CLASSES, { message: `must be one of ${LABEL_CLASSES.join(', ')}` }),
  vendor: z.string().min(1, 'must name the vendor, the site-own wall, or "none" for an ordinary page'),
  status: status.optional(),
  typicalStatus: status.optional(),
  headers: z.record(z.string(), z.string()).optional(),
});

const Manifest = z.object({
  version: z.literal(1, { message: 'must be 1' }).optional(),
  pages: z
    .array(z.object({ file: z.string().regex(/^[^/\\]+$/, 'must be a file name in the same directory'), label: Label }))
    .min(1, 'must list at least one page'),
});

const NAMED = /^([a-z_]+)--(.+)\.html?$/i;

export function readLabelledPages(dir: string): LabelledPage[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`<dir>: ${describeValue(dir, 200)} is not a directory of labelled pages`);
  const manifestPath = join(dir, 'manifest.json');
  return existsSync(manifestPath) ? fromManifest(dir, manifestPath) : fromNames(dir);
}

function fromManifest(dir: string, path: string): LabelledPage[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UserError(`${path}: is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const parsed = Manifest.safeParse(raw);
  if (!parsed.success)
    throw new UserError(`${path}: ${issueLines(parsed.error.issues, { root: 'manifest' }).slice(0, 5).join('; ')}`);
  return parsed.data.pages.map((entry, i) => {
    const file = join(dir, entry.file);
    if (!existsSync(file))
      throw new UserError(`${path}: pages[${i}].file: ${describeValue(entry.file)} does not exist in ${dir}`);
    return { id: entry.file, body: readFileSync(file, 'utf8'), label: dropUndefined(entry.label) };
  });
}

function fromNames(dir: string): LabelledPage[] {
  const pages: LabelledPage[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!/\.html?$/i.test(name)) continue;
    const m = NAMED.exec(name);
    const cls = m?.[1]?.toLowerCase();
    if (m === null || cls === undefined || !(LABEL_CLASSES as readonly string[]).includes(cls)) {
      throw new UserError(
        `${join(dir, basename(name))}: name it <class>--<vendor or anything>.html with <class> one of ` +
          `${LABEL_CLASSES.join(', ')}, or add a manifest.json`,
      );
    }
    const vendor = cls === 'ok' ? 'none' : (m[2]!.split('--')[0] ?? m[2]!);
    pages.push({ id: name, body: readFileSync(join(dir, name), 'utf8'), label: { class: cls as LabelClass, vendor } });
  }
  if (pages.length === 0) throw new UserError(`<dir>: ${dir} has no manifest.json and no <class>--<name>.html files`);
  return pages;
}

function dropUndefined(label: z.output<typeof Label>): LabelledPage['label'] {
  return {
    class: label.class,
    vendor: label.vendor,
    ...(label.status === undefined ? {} : { status: label.status }),
    ...(label.typicalStatus === undefined ? {} : { typicalStatus: label.typicalStatus }),
    ...(label.headers === undefined ? {} : { headers: label.headers }),
  };
}
