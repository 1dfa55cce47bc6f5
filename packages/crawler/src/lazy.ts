/**
 * A value built on first use, then kept. The package's schemas and its built-in marker catalogue are
 * built this way rather than when their module loads: building them costs tens of milliseconds that a
 * crawler would otherwise pay at start-up (the package's budget: it loads in under 100 ms), and a crawler
 * that only records through the API never needs most of them.
 */
export function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}
