/**
 * Makes sure the namespace knows the product's search attributes (docs/architecture.md, "Names fixed"), registering
 * the missing ones when the server allows it (dev server, self-hosted). Where it does not (Temporal
 * Cloud manages them through its own API), the error says exactly what to create.
 */
import type { ConnectionLike } from '@temporalio/client';
import type { OperatorService } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../../loop/search-attributes';
import { UserError } from '../../core/common/user-error';

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;

const PROTO_TYPE: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
};

const CLI_TYPE: Record<string, string> = { KEYWORD: 'Keyword', INT: 'Int', BOOL: 'Bool' };

export interface SearchAttributeCheck {
  registered: string[];
  present: string[];
}

export async function ensureSearchAttributes(
  connection: ConnectionLike & { operatorService: OperatorService },
  namespace: string,
): Promise<SearchAttributeCheck> {
  const listed = await connection.operatorService.listSearchAttributes({ namespace });
  const existing = { ...(listed.customAttributes ?? {}), ...(listed.systemAttributes ?? {}) };
  const missing = ALL_SEARCH_ATTRIBUTE_KEYS.filter((k) => existing[k.name] === undefined);
  const wrongType = ALL_SEARCH_ATTRIBUTE_KEYS.filter(
    (k) => existing[k.name] !== undefined && existing[k.name] !== PROTO_TYPE[k.type],
  );
  if (wrongType.length > 0) {
    const names = wrongType.map((k) => `${k.name} (needs ${CLI_TYPE[k.type]})`).join(', ');
    throw new UserError(
      `TEMPORAL_NAMESPACE: search attributes with the wrong type in namespace "${namespace}": ${names}; remove ` +
        `and re-create them`,
    );
  }
  if (missing.length > 0) {
    const searchAttributes: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
    for (const k of missing)
      searchAttributes[k.name] = PROTO_TYPE[k.type] ?? IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
    } catch (err) {
      const commands = missing
        .map(
          (k) =>
            `temporal operator search-attribute create --namespace ${namespace} --name ${k.name} --type ` +
            `${CLI_TYPE[k.type]}`,
        )
        .join(' && ');
      throw new UserError(
        `TEMPORAL_NAMESPACE: search attributes ${missing.map((k) => k.name).join(', ')} are missing in ` +
          `"${namespace}" and this connection may not add them (${(err as Error).message?.split('\n')[0]}); ` +
          `create them: ${commands}`,
      );
    }
  }
  return {
    registered: missing.map((k) => k.name),
    present: ALL_SEARCH_ATTRIBUTE_KEYS.filter((k) => !missing.includes(k)).map((k) => k.name),
  };
}
