/**
 * Committed histories as readable JSON, written and read with @temporalio/proto's own protobufjs
 * (`History.toObject` / `History.fromObject`): int64 as strings, enums by name, bytes as base64.
 *
 * Why not the SDK's `historyToJSON`/`historyFromJSON` (the UI's download format)? In this install
 * @temporalio/common and @temporalio/proto each carry their own nested copy of protobufjs, and the
 * SDK's proto-JSON helpers fail on the other copy's types ("type must be a Type"). Passing the replay
 * worker a decoded History object avoids those helpers entirely.
 */
import { temporal } from '@temporalio/proto';

const { History } = temporal.api.history.v1;
export type History = temporal.api.history.v1.IHistory;

export function encodeHistory(history: History): string {
  const object = History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
  return JSON.stringify(object, null, 1);
}

export function decodeHistory(json: string): temporal.api.history.v1.History {
  return History.fromObject(JSON.parse(json) as Record<string, unknown>);
}
