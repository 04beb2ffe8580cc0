import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The page's stylesheet and script, read once at start and served from /static/. */
export interface StaticAsset {
  type: string;
  body: Buffer;
}

const FILES: Record<string, string> = {
  'approval-page.css': 'text/css; charset=utf-8',
  'approval-page.js': 'text/javascript; charset=utf-8',
};

export const STATIC_PREFIX = '/static/';

export function loadStaticAssets(): ReadonlyMap<string, StaticAsset> {
  return new Map(
    Object.entries(FILES).map(([name, type]) => [
      `${STATIC_PREFIX}${name}`,
      { type, body: readFileSync(path.join(__dirname, 'static', name)) },
    ]),
  );
}
