import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Bearer tokens as retrysafe's files hold them: only their SHA-256, so a file readable by its host exposes no
 * usable secret. Operators (the operators file) and MCP agents (the agents file) are found the same way.
 */
export function tokenSha256(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The entry whose digest matches the token, or undefined. Every entry is compared in constant time and the loop
 * never stops early, so response time says nothing about which digest came close.
 */
export function findByToken<T extends { tokenSha256: string }>(entries: readonly T[], token: string): T | undefined {
  const digest = Buffer.from(tokenSha256(token), 'hex');
  let match: T | undefined;
  for (const entry of entries) {
    const candidate = Buffer.from(entry.tokenSha256, 'hex');
    if (candidate.length === digest.length && timingSafeEqual(candidate, digest) && match === undefined) match = entry;
  }
  return match;
}
