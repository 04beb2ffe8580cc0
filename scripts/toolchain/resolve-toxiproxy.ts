/**
 * Toxiproxy (`github.com/Shopify/toxiproxy/v2`), a TCP proxy whose HTTP API adds faults ("toxics": a reset after
 * the reply was written, a reply withheld, latency, bandwidth, a cut) between a worker and what it talks to: the
 * network-fault tests and `npm run chaos -- --faults`. Resolved like Mailpit:
 *
 *   RETRYSAFE_TOXIPROXY (a path to the server) ─▶ `toxiproxy-server` on PATH ─▶ the cached build in
 *     .tools/toxiproxy-server-<version>/ ─▶ `go install` of its cmd/server from the Go module proxy into that folder.
 */
import path from 'node:path';

import { type GoToolResolveOptions, type ResolvedGoTool, goToolFolder, resolveGoTool } from './go-build';

export const TOXIPROXY_VERSION = '2.5.0';
export const TOXIPROXY_ENV = 'RETRYSAFE_TOXIPROXY';

const TOXIPROXY = {
  title: 'toxiproxy',
  binary: 'toxiproxy-server',
  version: TOXIPROXY_VERSION,
  envVar: TOXIPROXY_ENV,
  installPackage: 'github.com/Shopify/toxiproxy/v2/cmd/server',
  installedAs: 'server',
  buildTime: 'under a minute the first time',
};

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');

export function toxiproxyFolder(projectRoot: string): string {
  return goToolFolder(projectRoot, TOXIPROXY);
}

export async function resolveToxiproxy(opts: GoToolResolveOptions = {}): Promise<ResolvedGoTool> {
  return resolveGoTool(TOXIPROXY, opts, opts.projectRoot ?? DEFAULT_PROJECT_ROOT);
}
