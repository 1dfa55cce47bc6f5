/**
 * The readable API reference (`GET /docs`): one self-contained HTML page rendered from the OpenAPI
 * document — no script, no CDN, no font or style fetched from anywhere (the API may run where there is
 * no internet, and a page that executes nothing needs no trust). Every value is HTML-escaped.
 */
import type { OpenApiDocument } from './openapi';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
/** `code` spans in the descriptions, the only markup they use. */
const inline = (text: string): string => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
const pretty = (value: unknown): string => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;

type Operation = Record<string, unknown> & {
  summary: string;
  description?: string;
  tags: string[];
  'x-required-scope'?: string;
};
interface Parameter {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  schema: Record<string, unknown>;
}

/** The page's style sheet, a line for each group of rules. */
const STYLE = [
  'body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}',
  'code,pre{font-family:ui-monospace,monospace;font-size:13px}pre{background:#f5f5f5;padding:.5rem;overflow:auto}',
  '.op{border-top:1px solid #ddd;padding:.5rem 0}' +
    '.method{display:inline-block;min-width:4rem;text-align:center;color:#fff;border-radius:3px;padding:0 .3rem;' +
    'background:#555}',
  '.get{background:#2b6cb0}.post{background:#2f855a}.put{background:#b7791f}.delete{background:#c53030}',
  'table{border-collapse:collapse;margin:.5rem 0}' +
    'td,th{border:1px solid #ddd;padding:.2rem .4rem;text-align:left;vertical-align:top}.scope,.desc{color:#555}',
].join('\n');

function operationHtml(method: string, path: string, op: Operation): string {
  const params = (op.parameters ?? []) as Parameter[];
  const body = op.requestBody as { required: boolean; content: Record<string, { schema: unknown }> } | undefined;
  const responses = op.responses as Record<
    string,
    { description: string; content?: Record<string, { schema: unknown }> }
  >;
  const id = `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-');
  const scope = op['x-required-scope'];
  const access =
    scope === undefined
      ? 'Public: no token needed.'
      : `Bearer token with scope <code>${escapeHtml(scope)}</code> (or <code>admin</code>).`;
  return [
    `<section class="op" id="${escapeHtml(id)}">`,
    `<h3><span class="method ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> ` +
      `<code>${escapeHtml(path)}</code></h3>`,
    `<p>${inline(op.summary)}</p>`,
    op.description === undefined ? '' : `<p class="desc">${inline(op.description)}</p>`,
    `<p class="scope">${access}</p>`,
    params.length === 0
      ? ''
      : `<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th><th>description</th></tr>${params
          .map(
            (p) =>
              `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${escapeHtml(p.in)}</td><td>` +
              `${p.required ? 'yes' : 'no'}</td><td><code>${escapeHtml(JSON.stringify(p.schema))}</code></td>` +
              `<td>${inline(p.description ?? '')}</td></tr>`,
          )
          .join('')}</table>`,
    body === undefined
      ? ''
      : Object.entries(body.content)
          .map(
            ([type, c]) =>
              `<details><summary>request body ` +
              `<code>${escapeHtml(type)}</code>${body.required ? '' : ' (optional)'}</summary>` +
              `${pretty(c.schema)}</details>`,
          )
          .join(''),
    `<ul class="responses">${Object.entries(responses)
      .map(
        ([status, r]) =>
          `<li><b>${escapeHtml(status)}</b> ${inline(r.description)}${Object.entries(r.content ?? {})
            .map(
              ([type, c]) =>
                `<details><summary><code>${escapeHtml(type)}</code></summary>${pretty(c.schema)}</details>`,
            )
            .join('')}</li>`,
      )
      .join('')}</ul>`,
    '</section>',
  ].join('\n');
}

export function renderApiPage(doc: OpenApiDocument): string {
  const sections = doc.tags.map((tag) => {
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, op]) => (op as Operation).tags.includes(tag.name))
        .map(([method, op]) => operationHtml(method, path, op as Operation)),
    );
    return (
      `<h2 id="${escapeHtml(tag.name)}">${escapeHtml(tag.name)}</h2><p>${inline(tag.description)}</p>` +
      `${ops.join('\n')}`
    );
  });
  const machineReadable = `<a href="/openapi.json">/openapi.json</a> (OpenAPI ${escapeHtml(doc.openapi)})`;
  const tagLinks = doc.tags.map((t) => `<a href="#${escapeHtml(t.name)}">${escapeHtml(t.name)}</a>`).join(' · ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(doc.info.title)}</title>
<style>
${STYLE}
</style></head><body>
<h1>${escapeHtml(doc.info.title)} <small>v${escapeHtml(doc.info.version)}</small></h1>
<p>${inline(doc.info.description)}</p>
<p>Machine-readable: ${machineReadable}. Sections: ${tagLinks}</p>
${sections.join('\n')}
</body></html>
`;
}
