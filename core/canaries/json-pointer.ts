/**
 * JSON Pointer (RFC 6901): "/items/0/price" addresses a value inside a JSON document. Small and strict:
 * "~0" is "~", "~1" is "/", any other "~" escape is invalid.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Why a pointer is malformed, or undefined. */
export function pointerProblem(pointer: string): string | undefined {
  if (pointer !== '' && !pointer.startsWith('/')) return 'must be "" (the whole document) or start with "/"';
  if (/~(?![01])/.test(pointer)) return 'has "~" not followed by 0 or 1 (escape "~" as "~0" and "/" as "~1")';
  return undefined;
}

export type PointerResult = { found: true; value: JsonValue } | { found: false; missing: string };

export function resolvePointer(document: JsonValue, pointer: string): PointerResult {
  if (pointer === '') return { found: true, value: document };
  let current: JsonValue = document;
  let path = '';
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path += `/${raw}`;
    if (Array.isArray(current)) {
      if (!/^(?:0|[1-9]\d*)$/.test(token) || Number(token) >= current.length) return { found: false, missing: path };
      current = current[Number(token)] as JsonValue;
    } else if (
      current !== null &&
      typeof current === 'object' &&
      Object.prototype.hasOwnProperty.call(current, token)
    ) {
      current = current[token] as JsonValue;
    } else {
      return { found: false, missing: path };
    }
  }
  return { found: true, value: current };
}
