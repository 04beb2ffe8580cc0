/**
 * A running stack as the demo scenarios read it (`npm run demo`): its addresses and the sandbox providers `npm
 * start` runs beside it, from the stack file (stack-file.ts).
 */
import { readStackFile } from '../../cli/dev/stack-file';

export interface RunningStack {
  pid: number;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  webUiUrl?: string;
  approvalsUrl: string;
  providers: Record<string, string>;
}

/** The stack running from `dir`, or undefined when none is (no file, or its process is gone). */
export async function readRunningStack(dir: string): Promise<RunningStack | undefined> {
  const stack = await readStackFile(dir);
  if (!stack) return undefined;
  return {
    pid: stack.pid,
    temporalAddress: stack.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    namespace: stack.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: stack.env.RETRYSAFE_TASK_QUEUE ?? 'retrysafe',
    ...(stack.webUiUrl ? { webUiUrl: stack.webUiUrl } : {}),
    approvalsUrl: stack.approvalsUrl ?? stack.env.RETRYSAFE_APPROVAL_URL ?? '',
    providers: stack.providers ?? {},
  };
}
