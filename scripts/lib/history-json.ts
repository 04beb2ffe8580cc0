import type { temporal as Temporal } from '@temporalio/proto';
import { temporal } from '@temporalio/proto';

/**
 * A fetched history in the proto's JSON form, as `temporal workflow show --output json` writes it (enum names,
 * longs as strings). Built through @temporalio/proto: common's historyToJSON trips over its own copy of
 * protobufjs when both are installed.
 */
export function historyAsJson(history: Temporal.api.history.v1.IHistory): { events?: unknown[] } {
  const History = temporal.api.history.v1.History;
  return History.toObject(History.fromObject(history as never), {
    longs: String,
    enums: String,
    bytes: String,
    defaults: false,
  }) as { events?: unknown[] };
}
