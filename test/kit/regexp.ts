/**
 * One regular expression from several literals, so that a long expected message still reads as a regular
 * expression when it is broken across lines: `joinRegExp(/^lines \d+–\d+ could /, /not be stored$/)` is
 * `/^lines \d+–\d+ could not be stored$/`, matching exactly the same. Each piece is a whole regular
 * expression by itself (a group or a class does not span pieces), and every piece has the same flags.
 */
export function joinRegExp(...pieces: readonly RegExp[]): RegExp {
  const flags = pieces[0]?.flags ?? '';
  if (pieces.some((p) => p.flags !== flags)) {
    throw new Error(`joinRegExp: the pieces' flags differ (${pieces.map((p) => `/${p.flags}`).join(', ')})`);
  }
  return new RegExp(pieces.map((p) => p.source).join(''), flags);
}
