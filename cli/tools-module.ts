/**
 * The team's tools, for the commands that need their schemas (`retrysafe mcp`): a module they name, loaded as their
 * worker loads it. It exports its tools as `tools` or as its default export, as an array of defineTool results, a
 * registry, or a function of the environment returning either (for tools that read their provider's URL from it).
 * `MODULE#name` names another export.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyTool } from '../policies/tool';
import { createToolRegistry, type ToolRegistry } from '../policies/tool-registry';
import { dynamicImport } from './dynamic-import.cjs';
import { UsageError } from './ops/errors';

/** The environment variable that names the tools module when `--tools` is not given. */
export const TOOLS_MODULE_ENV = 'RETRYSAFE_TOOLS_MODULE';

type ToolsExport = readonly AnyTool[] | ToolRegistry | ((env: NodeJS.ProcessEnv) => readonly AnyTool[] | ToolRegistry);

export async function loadToolsModule(
  spec: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): Promise<ToolRegistry> {
  const [file, exportName] = spec.split('#');
  const absolute = path.resolve(cwd, file);
  let mod: Record<string, unknown>;
  try {
    mod = await dynamicImport(pathToFileURL(absolute).href);
  } catch (err) {
    throw new UsageError(`--tools: cannot load ${absolute}: ${(err as Error).message.split('\n')[0]}`);
  }
  // A CommonJS module comes back with its exports as `default` too.
  const inner = (mod.default ?? {}) as Record<string, unknown>;
  const names = exportName ? [exportName] : ['tools', 'default'];
  const found = names
    .map((name) => (name === 'default' ? mod.default : (mod[name] ?? inner[name])))
    .find((v) => v !== undefined) as ToolsExport | undefined;
  if (found === undefined) {
    throw new UsageError(
      `--tools: ${absolute} exports no ${names.join(' or ')} (export your tools as \`tools\`, or name the export: ${file}#name)`,
    );
  }
  const value = typeof found === 'function' ? found(env) : found;
  if ('parseIntent' in value) return value;
  if (!Array.isArray(value)) throw new UsageError(`--tools: ${absolute}: its export is not a list of tools`);
  return createToolRegistry(value);
}
