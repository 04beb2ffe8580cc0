import type { temporal as Temporal } from '@temporalio/proto';
import { temporal } from '@temporalio/proto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';

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

/**
 * The history of `workflowId`, or undefined when no such workflow exists (fetching a history answers a missing
 * workflow with the gRPC status NOT_FOUND, not with the client's WorkflowNotFoundError).
 */
export async function historyIfAny(
  client: Client,
  workflowId: string,
): Promise<Temporal.api.history.v1.IHistory | undefined> {
  try {
    return await client.workflow.getHandle(workflowId).fetchHistory();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || (err as { code?: unknown }).code === GRPC_NOT_FOUND) return undefined;
    throw err;
  }
}

/** gRPC's status code NOT_FOUND. */
const GRPC_NOT_FOUND = 5;
