/**
 * The package as a crawler installs it: `npm pack` of the server package and of the crawler package it
 * depends on (`@target-health/crawler`, packages/crawler; the built files of `npm test`'s build; `prepare`
 * builds them for a git install), the two tarballs installed in a scratch project from the registry, and then
 * - `target-health/recorder`, `/controls` and `/signals` load in Node, `/signals` handing out the crawler
 *   package's own schema (one copy);
 * - a small TypeScript file using them compiles against the packed declarations (strict, nodenext);
 * - a misspelt event field passed to `record()` does not compile;
 * - `pg` is loaded only when a PostgreSQL sink or client is made (`@target-health/crawler/postgres`), and a
 *   project with the crawler package alone (no `pg`) loads every other entry and is told to install `pg`.
 * Install scripts are skipped (`--ignore-scripts`): nothing the crawler-side entry points load needs them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../kit/processes';

const exec = promisify(execFile);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'th-package-'));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

async function tsc(project: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await exec(process.execPath, [TSC, '-p', project], { cwd: scratch });
    return { code: 0, output: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

test(
  'npm pack → npm install of the tarball: the crawler-side exports load and type-check; a misspelt field does ' +
    'not compile',
  async () => {
    const { stdout: packed } = await exec(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch],
      {
        cwd: ROOT,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const [info] = JSON.parse(packed) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = new Set(info!.files.map((f) => f.path));
    for (const f of [
      'dist/server/compat/recorder.js',
      'dist/server/compat/recorder.d.ts',
      'dist/server/compat/controls.js',
      'dist/server/compat/controls.d.ts',
      'dist/core/signals/index.js',
      'dist/core/signals/index.d.ts',
      'client/bin/target-health.js',
      'README.md',
    ]) {
      expect(files.has(f) ? f : `missing ${f}`).toBe(f);
    }
    expect(
      [...files].filter(
        (f) => f.endsWith('.map') || f.startsWith('test/') || (f.endsWith('.ts') && !f.endsWith('.d.ts')),
      ),
    ).toEqual([]);

    const { stdout: packedCrawler } = await exec(
      'npm',
      ['pack', '-w', '@target-health/crawler', '--ignore-scripts', '--json', '--pack-destination', scratch],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
    const [crawler] = JSON.parse(packedCrawler) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const crawlerFiles = crawler!.files.map((f) => f.path);
    expect(crawlerFiles).toEqual(
      expect.arrayContaining([
        'dist/events/index.js',
        'dist/events/index.d.ts',
        'README.md',
        'CHANGELOG.md',
        'LICENSE',
        'package.json',
      ]),
    );
    expect(
      crawlerFiles.filter(
        (f) =>
          (!f.startsWith('dist/') && !['README.md', 'CHANGELOG.md', 'LICENSE', 'package.json'].includes(f)) ||
          f.endsWith('.map'),
      ),
    ).toEqual([]);

    const project = join(scratch, 'crawler');
    rmSync(project, { recursive: true, force: true });
    await exec('mkdir', ['-p', project]);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'scratch-crawler', version: '1.0.0', private: true }),
    );
    await exec(
      'npm',
      [
        'install',
        join(scratch, crawler!.filename),
        join(scratch, info!.filename),
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--prefer-offline',
        '--loglevel=error',
      ],
      { cwd: project, maxBuffer: 64 * 1024 * 1024 },
    );
    expect(readdirSync(join(project, 'node_modules', 'target-health'))).toEqual(
      expect.arrayContaining(['dist', 'package.json']),
    );

    const { stdout: loaded } = await exec(
      process.execPath,
      [
        '-e',
        "const r = require('target-health/recorder'); const c = require('target-health/controls'); const s = " +
          "require('target-health/signals'); const e = require('@target-health/crawler/events'); " +
          'console.log([typeof r.createRecorder, typeof r.apiSink, typeof c.createControlsClient, typeof ' +
          "c.createPostgresControlsClient, typeof s.parseEvent, s.parseEvent === e.parseEvent].join(' '))",
      ],
      { cwd: project },
    );
    expect(loaded.trim()).toBe('function function function function function true');

    // pg: not loaded by the other entries, nor by importing ./postgres; loaded when a sink is made.
    const pgLoaded = 'Object.keys(require.cache).some((k) => /[\\\\/]node_modules[\\\\/]pg[\\\\/]/.test(k))';
    const { stdout: lazy } = await exec(
      process.execPath,
      [
        '-e',
        `for (const e of ['events', 'recorder', 'controls']) require('@target-health/crawler/' + e); const p = ` +
          `require('@target-health/crawler/postgres'); const before = ${pgLoaded}; const sink = p.postgresSink({ ` +
          `connectionString: 'postgres://u:p@127.0.0.1:1/db' }); console.log(before, ${pgLoaded}, ` +
          `require('target-health/recorder').postgresSink === p.postgresSink); void sink.close();`,
      ],
      { cwd: project },
    );
    expect(lazy.trim()).toBe('false true true');

    // The crawler package alone: no pg in the project.
    const bare = join(scratch, 'bare');
    rmSync(bare, { recursive: true, force: true });
    await exec('mkdir', ['-p', bare]);
    writeFileSync(
      join(bare, 'package.json'),
      JSON.stringify({ name: 'scratch-bare', version: '1.0.0', private: true }),
    );
    await exec(
      'npm',
      [
        'install',
        join(scratch, crawler!.filename),
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--prefer-offline',
        '--loglevel=error',
      ],
      { cwd: bare, maxBuffer: 64 * 1024 * 1024 },
    );
    expect(readdirSync(join(bare, 'node_modules'))).not.toContain('pg');
    const { stdout: missing } = await exec(
      process.execPath,
      [
        '-e',
        "for (const e of ['events', 'recorder', 'controls']) require('@target-health/crawler/' + e); const p = " +
          "require('@target-health/crawler/postgres'); for (const make of [() => p.postgresSink({ " +
          "connectionString: 'postgres://u:p@h/db' }), () => p.createPostgresControlsClient({ connectionString: " +
          "'postgres://u:p@h/db' })]) { try { make(); console.log('made'); } catch (err) { " +
          'console.log(err.message); } }',
      ],
      { cwd: bare },
    );
    expect(missing.trim().split('\n')).toEqual([
      'postgresSink: needs the pg package (npm install pg)',
      'createPostgresControlsClient: needs the pg package (npm install pg)',
    ]);

    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['good.ts'],
      }),
    );
    writeFileSync(
      join(project, 'good.ts'),
      `import { createRecorder, apiSink, type RecordInput } from 'target-health/recorder';
import { createControlsClient, type SiteControls } from 'target-health/controls';
import { parseEvent } from 'target-health/signals';
const recorder = createRecorder({ sink: apiSink({ apiUrl: 'http://127.0.0.1:8787', token: 'th_x' }) });
const event: RecordInput = {
  ts: Date.now(), site: 'shop.example.com', status: 200, latencyMs: 120,
  headers: { server: 'nginx', 'cf-ray': undefined },
};
const { id, kept }: { id: string; kept: boolean } = recorder.recordWithId(event);
const controls = createControlsClient({ apiUrl: 'http://127.0.0.1:8787', token: 'th_x', unknownSite: 'pause' });
const held: SiteControls | undefined = controls.controlsFor('shop.example.com');
const parsed = parseEvent(event);
export const used = [id, kept, held, parsed.ok];
`,
    );
    const good = await tsc(join(project, 'tsconfig.json'));
    expect(good.output).toBe('');
    expect(good.code).toBe(0);

    writeFileSync(
      join(project, 'tsconfig.bad.json'),
      JSON.stringify({ extends: './tsconfig.json', files: ['bad.ts'] }),
    );
    writeFileSync(
      join(project, 'bad.ts'),
      `import { createRecorder, apiSink } from 'target-health/recorder';
const recorder = createRecorder({ sink: apiSink({ apiUrl: 'http://127.0.0.1:8787', token: 'th_x' }) });
recorder.record({ ts: Date.now(), site: 'shop.example.com', stauts: 200, latencyMs: 120 });
`,
    );
    const bad = await tsc(join(project, 'tsconfig.bad.json'));
    expect(bad.code).not.toBe(0);
    expect(bad.output).toMatch(
      /bad\.ts\(3,\d+\): error TS\d+: Object literal may only specify known properties, .*'stauts'/,
    );
  },
  600_000,
);
