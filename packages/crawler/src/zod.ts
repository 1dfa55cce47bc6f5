/**
 * The package's one door to zod: every module imports zod's parts from here (`import * as z from
 * '../zod'`), never from 'zod' itself.
 *
 * Why: zod 4 installs ~6 MB (its TypeScript sources beside two builds, and ~50 locales), twice the whole
 * footprint this package may add to a crawler's image, and requiring it costs ~70 ms. The published build
 * replaces this module's output with a bundle of only the parts named below (scripts/bundle-zod.mjs:
 * esbuild, tree-shaken, minified, zod's MIT licence on top), so zod is not a dependency of the installed
 * package. The server and the tests run the sources, where this is zod itself. Zod 4 is built for more
 * than one copy in a process (its registry and config live on globalThis, `instanceof` checks traits),
 * so the server's own zod composes these schemas.
 *
 * Adding a zod function the package uses means naming it here; the build fails otherwise (tsc).
 */
export {
  array,
  boolean,
  custom,
  date,
  enum,
  literal,
  NEVER,
  number,
  object,
  record,
  strictObject,
  string,
  union,
  unknown,
  ZodError,
} from 'zod';
export type { input, output, ZodType } from 'zod';
export type * as core from 'zod/v4/core';
