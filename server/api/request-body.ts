/**
 * Request bodies of the batch routes: which media types a route takes (415 with a one-line message
 * naming them otherwise), and `Content-Encoding: gzip` undone as the body arrives — with the body limit
 * applied to the decompressed bytes, so a small gzip bomb gets 413 instead of filling the memory, and
 * decompression stops at the limit instead of running on to the end of the bomb.
 */
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { capText } from '@target-health/crawler/events/zod-issues';

/** An error Fastify answers with its `statusCode` (through the server's error handler: one line, no stack). */
export class BodyError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'BodyError';
  }
}

/** The media type of a Content-Type header, lower-cased, without parameters; '' when absent. */
export function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/** Throws the 415 naming the accepted types when `header` is not one of them; returns the media type. */
export function requireMediaType(header: string | undefined, accepted: readonly string[]): string {
  const type = mediaTypeOf(header);
  if (accepted.includes(type)) return type;
  const got = type === '' ? 'no Content-Type' : `Content-Type ${capText(type, 80)}`;
  throw new BodyError(415, 'unsupported_media_type', `${got} is not accepted here; send ${accepted.join(' or ')}`);
}

/** The body's content encoding: identity or gzip; anything else is a 415 naming what is accepted. */
export function requireEncoding(header: string | undefined): 'identity' | 'gzip' {
  const enc = (header ?? '').trim().toLowerCase();
  if (enc === '' || enc === 'identity') return 'identity';
  if (enc === 'gzip' || enc === 'x-gzip') return 'gzip';
  throw new BodyError(
    415,
    'unsupported_media_type',
    `Content-Encoding ${capText(enc, 40)} is not accepted; send the body as is or with Content-Encoding: gzip`,
  );
}

/** A stream Fastify reads the body from: it checks `receivedEncodedLength` against Content-Length. */
export type DecodedBody = Readable & { receivedEncodedLength: number };

/**
 * The decompressed body of `source` (a gzip stream), failing with 413 once it exceeds `limit` bytes
 * and with 400 when it is not valid gzip. The request stream itself is never destroyed (only unpiped):
 * the answer still has to go out on its socket.
 */
export function gunzipWithin(source: Readable, limit: number): DecodedBody {
  const gunzip = createGunzip();
  let produced = 0;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      produced += chunk.length;
      if (produced > limit)
        callback(
          new BodyError(413, 'too_large', `body: larger than ${limit} bytes once decompressed; send smaller batches`),
        );
      else callback(null, chunk);
    },
  }) as Transform & DecodedBody;
  out.receivedEncodedLength = 0;
  const stop = (err: Error): void => {
    source.unpipe(gunzip);
    gunzip.unpipe(out);
    gunzip.destroy();
    out.destroy(err);
  };
  source.on('data', (chunk: Buffer) => {
    out.receivedEncodedLength += chunk.length;
  });
  source.on('error', stop);
  gunzip.on('error', (err: Error) =>
    stop(
      new BodyError(
        400,
        'bad_gzip',
        `Content-Encoding: the body is not valid gzip (${capText(err.message, 80)}); compress it with gzip or ` +
          `drop the header`,
      ),
    ),
  );
  // The limit was passed: stop decompressing (the transform's error destroys `out`).
  out.on('error', () => {
    source.unpipe(gunzip);
    gunzip.destroy();
  });
  source.pipe(gunzip).pipe(out);
  return out;
}
