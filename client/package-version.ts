import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * This package's version, from its package.json (beside the sources, or above the built `dist/`): what `retrysafe
 * --version` prints and what the MCP server and client report in their handshakes.
 */
export const VERSION: string = (() => {
  for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'retrysafe' && pkg.version) return pkg.version;
  }
  return '0.0.0';
})();
