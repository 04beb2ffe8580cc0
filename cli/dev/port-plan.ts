/**
 * The ports `retrysafe dev` advertises, checked before anything starts or is printed. A port left at its default
 * that something else holds is swapped for a free one (said in one line); a port the person chose that is taken stops
 * the command with a message naming the option, since they meant that port.
 */
import { getFreePort, isPortFree } from './free-port';

export type PortOption = '--port' | '--ui-port' | '--approvals-port' | '--metrics-port';

export interface PortRequest {
  option: PortOption;
  /** The port asked for; 0 for any free port (the stack picks it); null for none. */
  port: number | null;
  /** Whether the person gave it on the command line (not the default). */
  given: boolean;
}

export type PortPlan =
  { ok: true; ports: Record<PortOption, number | null>; notes: string[] } | { ok: false; message: string };

/** Options that take `none`: a stack can run without them. */
const OPTIONAL: readonly PortOption[] = ['--ui-port', '--metrics-port'];

export async function planPorts(
  requests: readonly PortRequest[],
  deps: { isFree: (port: number) => Promise<boolean>; freePort: () => Promise<number> } = {
    isFree: (port) => isPortFree(port),
    freePort: () => getFreePort(),
  },
): Promise<PortPlan> {
  const ports = {} as Record<PortOption, number | null>;
  const notes: string[] = [];
  for (const { option, port, given } of requests) {
    ports[option] = port;
    if (port === null || port === 0 || (await deps.isFree(port))) continue;
    if (given) {
      const none = OPTIONAL.includes(option) ? `, ${option} none for none` : '';
      return {
        ok: false,
        message: `${option}: port ${port} on 127.0.0.1 is in use; pass another port, ${option} 0 for any free port${none}`,
      };
    }
    let free = await deps.freePort();
    // Never the port another option already holds.
    while (Object.values(ports).includes(free)) free = await deps.freePort();
    ports[option] = free;
    notes.push(`port ${port} (${option}) is in use: took ${free} instead`);
  }
  return { ok: true, ports, notes };
}
