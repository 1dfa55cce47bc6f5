/**
 * Every SQL statement is parameterised or built from validated identifiers (docs/security.md, "SQL").
 * A static check with the TypeScript compiler: it finds every statement handed to PostgreSQL —
 * `x.query(sql, …)`, `x.query({ text })`, `copyFrom(sql)`, `copyTo(sql)` — in the product's source, follows
 * constants to their definitions, and lists every `${…}` or `+` piece that is not a constant. Each such
 * piece must be one of the reviewed exceptions below, with the reason it cannot carry a value from
 * outside. A new interpolation fails this test until it is made a `$n` parameter or reviewed here.
 * dev/bench/ (load generators, never deployed) and test/ are not scanned.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..', '..');
const NOT_PRODUCT = new Set(['test', 'bench', 'node_modules', 'dist', 'data', 'deploy', '.git']);

interface Finding {
  file: string;
  line: number;
  expression: string;
}

/**
 * The reviewed exceptions: file, the interpolated expression as written (on one line), and why no outside
 * value can reach it. Keep this list short; prefer a `$n` parameter.
 */
const REVIEWED: ReadonlyArray<{ file: string; expression: string; why: string }> = [
  // The embedded server's set-up: DDL (ALTER ROLE, CREATE DATABASE) takes no parameters.
  {
    file: 'stack/embedded-postgres.ts',
    expression: 'admin.escapeIdentifier(SUPERUSER)',
    why: "the constant 'postgres', quoted by pg's escapeIdentifier",
  },
  {
    file: 'stack/embedded-postgres.ts',
    expression: 'role',
    why: "admin.escapeIdentifier(PRODUCT_ROLE): the constant 'target_health', quoted",
  },
  {
    file: 'stack/embedded-postgres.ts',
    expression: 'admin.escapeIdentifier(database)',
    why: "the database option (default 'target_health', set by our own callers only), quoted by escapeIdentifier",
  },
  {
    file: 'stack/embedded-postgres.ts',
    expression: 'admin.escapeLiteral(scramVerifier(secret.superuser))',
    why: 'a SCRAM verifier we compute (base64, $ and :), quoted by escapeLiteral',
  },
  {
    file: 'stack/embedded-postgres.ts',
    expression: 'admin.escapeLiteral(scramVerifier(secret.product))',
    why: 'a SCRAM verifier we compute (base64, $ and :), quoted by escapeLiteral',
  },
  {
    file: 'stack/embedded-postgres.ts',
    expression: 'PRODUCT_ROLE',
    why: "the constant 'target_health' in the ownership hand-over block",
  },
  {
    file: 'stack/embedded-postgres.ts',
    expression: 'SUPERUSER',
    why: "the constant 'postgres' in the ownership hand-over block",
  },
  {
    file: 'server/db/signal-store/partitions.ts',
    expression: 'p.name',
    why: 'a relname read from pg_inherits for a fixed parent table, kept only when it matches /_p\\d{8}$/',
  },
  {
    file: 'server/db/signal-store/rollup-stage.ts',
    expression: 'STAGE_TABLE[level]',
    why: 'one of three fixed temporary table names, level typed RollupLevel',
  },
  {
    file: 'server/db/signal-store/rollup-stage.ts',
    expression: 'ROLLUP_TABLE[level]',
    why: 'one of three fixed table names, level typed RollupLevel',
  },
  {
    file: 'server/db/signal-store/rollup-stage.ts',
    expression: 'stage',
    why: 'STAGE_TABLE[level]: a fixed temporary table name',
  },
  {
    file: 'server/db/signal-store/rollup-stage.ts',
    expression: 'COLUMNS',
    why: 'fixed column names from COUNT_COLUMNS plus literals',
  },
  {
    file: 'server/db/signal-store/rollup-stage.ts',
    expression: "SUMMED.map((c) => `${c} = r.${c} + EXCLUDED.${c}`).join(',\\n       ')",
    why: 'fixed column names from COUNT_COLUMNS',
  },
  {
    file: 'tools/charts/read-history.ts',
    expression: 'ROLLUP_TABLE[r.level]',
    why: 'one of three fixed table names (server/db/signal-store/aggregate.ts), level typed RollupLevel',
  },
  {
    file: 'tools/backtest/scratch-database.ts',
    expression: 'name',
    why:
      'a scratch database name the code makes: th_backtest_<pid>_<8 hex>_<n> (CREATE/DROP DATABASE take no ' +
      'parameters)',
  },
  {
    file: 'tools/backtest/scratch-database.ts',
    expression: 'template',
    why: 'the scratch template database name the code makes: th_backtest_<pid>_<8 hex>_template',
  },
  {
    file: 'server/db/canaries.ts',
    expression: "RUN_COLUMNS.split(', ').map((c) => `r.${c}`).join(', ')",
    why: 'RUN_COLUMNS is a constant list of column names',
  },
  // The PostgreSQL contract with crawlers (packages/crawler/src/postgres/contract.ts): constants imported from another
  // module.
  {
    file: 'server/api/inbox-drainer.ts',
    expression: 'INBOX_CHANNEL',
    why: "the constant 'th_event_inbox' (contract.ts)",
  },
  {
    file: 'server/db/signal-store/inbox.ts',
    expression: 'INBOX_TABLE',
    why: "the constant 'event_inbox' (contract.ts)",
  },
  {
    file: 'packages/crawler/src/postgres/sink.ts',
    expression: 'INBOX_TABLE',
    why: "the constant 'event_inbox' (contract.ts)",
  },
  {
    file: 'packages/crawler/src/postgres/controls-client.ts',
    expression: 'CONTROLS_VIEW',
    why: "the constant 'crawler_controls' (contract.ts)",
  },
  {
    file: 'packages/crawler/src/postgres/controls-client.ts',
    expression: 'CONTROLS_CHANNEL',
    why: "the constant 'th_controls' (contract.ts)",
  },
];

function productFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (dir === ROOT && (NOT_PRODUCT.has(name) || name.startsWith('.'))) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...productFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Statements that hand SQL to PostgreSQL, and the interpolations in them that are not constants. */
function scanSql(fileName: string, text: string): { statements: number; findings: Finding[] } {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const findings: Finding[] = [];
  let statements = 0;
  const report = (node: ts.Node): void => {
    findings.push({
      file: fileName,
      line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      // Line breaks and their indentation left out: a formatter may wrap a long expression.
      expression: node.getText().replace(/\s*\n\s*/g, ''),
    });
  };

  /** The initializer of `const name = …` visible from `at` (this block or an enclosing one), if any. */
  const constInitializer = (name: string, at: ts.Node): ts.Expression | undefined => {
    for (let scope: ts.Node | undefined = at; scope !== undefined; scope = scope.parent) {
      const statementsOf =
        ts.isBlock(scope) || ts.isSourceFile(scope) || ts.isModuleBlock(scope) ? scope.statements : undefined;
      for (const statement of statementsOf ?? []) {
        if (!ts.isVariableStatement(statement) || !(statement.declarationList.flags & ts.NodeFlags.Const)) continue;
        for (const d of statement.declarationList.declarations)
          if (ts.isIdentifier(d.name) && d.name.text === name && d.initializer) return d.initializer;
      }
    }
    return undefined;
  };
  /** `stateQuery` and friends: Temporal query definitions from the message contract, not SQL. */
  const importedFromMessages = (name: string): boolean =>
    source.statements.some(
      (s) =>
        ts.isImportDeclaration(s) &&
        ts.isStringLiteral(s.moduleSpecifier) &&
        /loop\/messages$/.test(s.moduleSpecifier.text) &&
        s.importClause?.namedBindings !== undefined &&
        ts.isNamedImports(s.importClause.namedBindings) &&
        s.importClause.namedBindings.elements.some((e) => e.name.text === name),
    );

  const isConstant = (e: ts.Expression, seen: Set<ts.Node>): boolean => {
    if (seen.has(e)) return false;
    seen.add(e);
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) return isConstant(e.expression, seen);
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) || ts.isNumericLiteral(e)) return true;
    if (ts.isTemplateExpression(e)) return e.templateSpans.every((span) => isConstant(span.expression, seen));
    if (ts.isConditionalExpression(e)) return isConstant(e.whenTrue, seen) && isConstant(e.whenFalse, seen);
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken)
      return isConstant(e.left, seen) && isConstant(e.right, seen);
    if (ts.isIdentifier(e)) {
      const init = constInitializer(e.text, e);
      return init !== undefined && isConstant(init, seen);
    }
    return false;
  };

  /** Reports each non-constant piece of the SQL text `e`. */
  const checkSql = (e: ts.Expression, at: ts.Node): void => {
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) return checkSql(e.expression, at);
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return;
    if (ts.isTemplateExpression(e)) {
      for (const span of e.templateSpans) if (!isConstant(span.expression, new Set())) report(span.expression);
      return;
    }
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      for (const side of [e.left, e.right]) if (!isConstant(side, new Set())) checkSql(side, at);
      return;
    }
    if (ts.isConditionalExpression(e)) {
      checkSql(e.whenTrue, at);
      checkSql(e.whenFalse, at);
      return;
    }
    if (ts.isIdentifier(e)) {
      const init = constInitializer(e.text, at);
      if (init !== undefined) return checkSql(init, init);
      if (importedFromMessages(e.text)) {
        statements--; // a Temporal query (`handle.query(stateQuery)`), not SQL
        return;
      }
    }
    if (ts.isObjectLiteralExpression(e)) {
      const textProperty = e.properties.find(
        (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText() === 'text',
      );
      if (textProperty) return checkSql(textProperty.initializer, at);
    }
    report(e);
  };

  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const callee = node.expression;
      const name = ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : ts.isIdentifier(callee)
          ? callee.text
          : '';
      const first = node.arguments[0]!;
      const isCopyStream =
        ts.isCallExpression(first) &&
        ts.isIdentifier(first.expression) &&
        /^copy(From|To)$/.test(first.expression.text);
      if (
        (name === 'query' && ts.isPropertyAccessExpression(callee) && !isCopyStream) ||
        name === 'copyFrom' ||
        name === 'copyTo'
      ) {
        statements++;
        checkSql(first, node);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { statements, findings };
}

function scanProduct(): { statements: number; findings: Finding[] } {
  let statements = 0;
  const findings: Finding[] = [];
  for (const path of productFiles()) {
    const result = scanSql(relative(ROOT, path), readFileSync(path, 'utf8'));
    statements += result.statements;
    findings.push(...result.findings);
  }
  return { statements, findings };
}

describe('the scanner', () => {
  test('finds values interpolated into SQL, directly, by concatenation and through a constant', () => {
    const { statements, findings } = scanSql(
      'fixture.ts',
      `async function bad(pool: any, site: string) {
        await pool.query(\`SELECT * FROM sites WHERE site = '\${site}'\`);
        await pool.query('SELECT * FROM sites WHERE site = ' + site);
        const sql = \`DELETE FROM sites WHERE site = '\${site.trim()}'\`;
        await pool.query(sql);
        await pool.query({ text: \`SELECT \${site}\` });
        await client.query(copyFrom(\`COPY \${site} FROM STDIN\`));
      }`,
    );
    expect(statements).toBe(5);
    expect(findings.map((f) => `${f.line}: ${f.expression}`)).toEqual([
      '2: site',
      '3: site',
      '4: site.trim()',
      '6: site',
      '7: site',
    ]);
  });

  test('accepts parameters, constants, constant choices and Temporal queries', () => {
    const { statements, findings } = scanSql(
      'fixture.ts',
      `import { stateQuery } from '../loop/messages';
      const COLUMNS = 'site, owner';
      const SELECT = \`SELECT \${COLUMNS} FROM sites\`;
      async function good(pool: any, handle: any, site: string, lock: boolean) {
        await pool.query('SELECT * FROM sites WHERE site = $1', [site]);
        await pool.query(\`\${SELECT} WHERE site = $1\${lock ? ' FOR UPDATE' : ''}\`, [site]);
        await handle.query(stateQuery);
      }`,
    );
    expect(statements).toBe(2);
    expect(findings).toEqual([]);
  });
});

test('every SQL statement of the product is parameterised or built from reviewed identifiers', () => {
  const { statements, findings } = scanProduct();
  // A scan that finds nothing proves nothing: the product has dozens of statements.
  expect(statements).toBeGreaterThan(30);
  const reviewed = (f: Finding) => REVIEWED.some((r) => r.file === f.file && r.expression === f.expression);
  const unreviewed = findings.filter((f) => !reviewed(f)).map((f) => `${f.file}:${f.line}: \${${f.expression}}`);
  expect(unreviewed).toEqual([]);
  // And no stale exception: each one still matches a statement, so the list says what the code does.
  const stale = REVIEWED.filter((r) => !findings.some((f) => f.file === r.file && f.expression === r.expression)).map(
    (r) => `${r.file}: ${r.expression}`,
  );
  expect(stale).toEqual([]);
});
