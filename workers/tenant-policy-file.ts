import { readFile } from 'node:fs/promises';
import { parseTenantPolicyConfig, type TenantPolicyConfig } from '../policies/tenant-policy';
import { ConfigError } from './config';

/**
 * Reads a tenant policy file (JSON, see policies/tenant-policy.ts) at worker start. Every error starts
 * with the file's path and, for content errors, names the field: `policies.json: tenants.acme.…: …`.
 */
export async function loadTenantPolicyFile(path: string): Promise<TenantPolicyConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${path}: cannot read the tenant policy file: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${path}: not valid JSON: ${(err as Error).message}`);
  }
  try {
    return parseTenantPolicyConfig(raw);
  } catch (err) {
    throw new ConfigError(`${path}: ${(err as Error).message}`);
  }
}
