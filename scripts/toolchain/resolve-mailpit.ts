/**
 * Mailpit (`github.com/axllent/mailpit`), an SMTP server with an HTTP API, for the SMTP mail example tool. Resolved
 * like the project's other servers:
 *
 *   RETRYSAFE_MAILPIT (a path to the binary) ─▶ `mailpit` on PATH ─▶ the cached build in .tools/mailpit-<version>/
 *     ─▶ `go install` from the Go module proxy into that folder (CGO off, Go's caches in .tools/go/).
 *
 * v1.33.1 builds on Go 1.26; the build took 37 s here with the Temporal server's modules already cached.
 */
import path from 'node:path';

import { type GoToolResolveOptions, type ResolvedGoTool, goToolFolder, resolveGoTool } from './go-build';

export const MAILPIT_VERSION = '1.33.1';
export const MAILPIT_ENV = 'RETRYSAFE_MAILPIT';

const MAILPIT = {
  title: 'Mailpit',
  binary: 'mailpit',
  version: MAILPIT_VERSION,
  envVar: MAILPIT_ENV,
  installPackage: 'github.com/axllent/mailpit',
  buildTime: 'under a minute the first time',
};

export type ResolvedMailpit = ResolvedGoTool;

export type ResolveMailpitOptions = GoToolResolveOptions;

const DEFAULT_PROJECT_ROOT = path.resolve(__dirname, '..', '..');

export function mailpitFolder(projectRoot: string, version = MAILPIT_VERSION): string {
  return goToolFolder(projectRoot, { binary: 'mailpit', version });
}

export async function resolveMailpit(opts: ResolveMailpitOptions = {}): Promise<ResolvedMailpit> {
  return resolveGoTool(MAILPIT, opts, opts.projectRoot ?? DEFAULT_PROJECT_ROOT);
}
