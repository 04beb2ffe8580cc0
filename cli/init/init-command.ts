/**
 * `retrysafe init`: a working project in an empty folder or one `npm init -y` just made. It writes a tool, a fake
 * provider for it (so the first action succeeds with nothing else running), a worker with retrysafe's plugin, a client
 * that claims an action, a tsconfig and package scripts, then prints what to install and run. It overwrites nothing
 * unless told to (`--force`); package.json only gains the scripts it lacks.
 *
 *   template/src/*.ts            → src/*.ts      (shipped as they are: the README shows the same files)
 *   template/tsconfig.template.json → tsconfig.json
 *   template/gitignore           → .gitignore    (npm leaves files named .gitignore out of a tarball)
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

export const TEMPLATE_DIR = path.join(__dirname, 'template');

/** The scripts init adds to package.json, each only when the project has none of that name. */
export const INIT_SCRIPTS: Readonly<Record<string, string>> = {
  build: 'tsc -p .',
  dev: 'retrysafe dev',
  worker: 'node --env-file=.retrysafe/dev.env dist/worker.js',
  client: 'node --env-file=.retrysafe/dev.env dist/client.js',
};

/** What the project needs installed: the package, the Temporal SDK parts it uses, zod, and TypeScript to build. */
export const INIT_DEPENDENCIES = [
  'retrysafe',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/workflow',
  'zod',
];
export const INIT_DEV_DEPENDENCIES = ['typescript', '@types/node'];

const PackageJson = z.looseObject({
  scripts: z.record(z.string(), z.string()).optional(),
  dependencies: z.record(z.string(), z.string()).optional(),
  devDependencies: z.record(z.string(), z.string()).optional(),
});

export interface InitResult {
  written: string[];
  scriptsAdded: string[];
  next: string[];
}

export class InitRefused extends Error {
  override name = 'InitRefused';
}

/** Scaffolds the project in `dir`; throws InitRefused, having written nothing, when a file it would write exists. */
export async function initProject(
  dir: string,
  opts: { force?: boolean; nodeVersion?: string } = {},
): Promise<InitResult> {
  const files = await templateFiles();
  const targets = files.map((from) => ({ from, to: targetName(from) }));
  const existing = targets.filter((t) => t.to !== '.gitignore' && existsSync(path.join(dir, t.to))).map((t) => t.to);
  if (existing.length > 0 && !opts.force) {
    throw new InitRefused(
      `${existing.join(', ')} already exist${existing.length === 1 ? 's' : ''} in ${dir}; nothing was written ` +
        '(retrysafe init scaffolds an empty or fresh npm project; --force overwrites them)',
    );
  }
  const pkgFile = path.join(dir, 'package.json');
  const pkgText = existsSync(pkgFile) ? await readFile(pkgFile, 'utf8') : undefined;
  let pkg: z.infer<typeof PackageJson>;
  try {
    pkg = PackageJson.parse(
      pkgText === undefined ? { name: packageName(dir), version: '1.0.0', private: true } : JSON.parse(pkgText),
    );
  } catch (err) {
    const issue = err instanceof z.ZodError ? err.issues[0] : undefined;
    const where = issue ? `${issue.path.join('.')}: ${issue.message}` : (err as Error).message;
    throw new InitRefused(`package.json: ${where}; nothing was written`);
  }

  await mkdir(path.join(dir, 'src'), { recursive: true });
  const written: string[] = [];
  for (const { from, to } of targets) {
    const text = await readFile(path.join(TEMPLATE_DIR, from), 'utf8');
    const file = path.join(dir, to);
    if (to === '.gitignore' && existsSync(file)) {
      const have = new Set((await readFile(file, 'utf8')).split('\n').map((l) => l.trim()));
      const missing = text.split('\n').filter((l) => l.trim() !== '' && !have.has(l.trim()));
      if (missing.length === 0) continue;
      await appendFile(file, `\n${missing.join('\n')}\n`);
    } else {
      await writeFile(file, text);
    }
    written.push(to);
  }
  const scripts = { ...(pkg.scripts ?? {}) };
  const scriptsAdded = Object.keys(INIT_SCRIPTS).filter((name) => scripts[name] === undefined);
  for (const name of scriptsAdded) scripts[name] = INIT_SCRIPTS[name];
  await writeFile(pkgFile, `${JSON.stringify({ ...pkg, scripts }, null, 2)}\n`);
  if (pkgText === undefined) written.push('package.json');

  const has = (name: string) => pkg.dependencies?.[name] !== undefined || pkg.devDependencies?.[name] !== undefined;
  // Before Node.js 22.13 the SQLite ledger of `retrysafe dev` needs better-sqlite3; from then on node:sqlite.
  const [major, minor] = (opts.nodeVersion ?? process.versions.node).split('.').map(Number);
  const sqlite = major < 22 || (major === 22 && minor < 13) ? ['better-sqlite3'] : [];
  const missing = [...INIT_DEPENDENCIES, ...sqlite].filter((name) => !has(name));
  const missingDev = INIT_DEV_DEPENDENCIES.filter((name) => !has(name));
  return {
    written,
    scriptsAdded,
    next: [
      ...(missing.length ? [`npm install ${missing.join(' ')}`] : []),
      ...(missingDev.length ? [`npm install --save-dev ${missingDev.join(' ')}`] : []),
      'npm run build',
      'npx retrysafe dev                                  # keeps running: use a second terminal for the rest',
      'npm run worker                                     # keeps running: a third terminal',
      'npm run client -- launch-1 "We are live"           # claims the action and prints it once confirmed',
    ],
  };
}

async function templateFiles(): Promise<string[]> {
  const src = (await readdir(path.join(TEMPLATE_DIR, 'src'))).filter((f) => f.endsWith('.ts')).sort();
  return [...src.map((f) => `src/${f}`), 'tsconfig.template.json', 'gitignore'];
}

function targetName(templateFile: string): string {
  if (templateFile === 'tsconfig.template.json') return 'tsconfig.json';
  if (templateFile === 'gitignore') return '.gitignore';
  return templateFile;
}

/** An npm package name from the folder's name, as `npm init -y` would make it. */
function packageName(dir: string): string {
  const name = path
    .basename(path.resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '');
  return name || 'my-service';
}

/** `retrysafe init [--dir DIR] [--force]`: answers the exit code. */
export async function runInit(
  options: { dir: string; force?: boolean },
  io: { out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  try {
    const result = await initProject(options.dir, { force: options.force === true });
    const where = path.relative(process.cwd(), path.resolve(options.dir)) || '.';
    io.out(`wrote ${result.written.join(', ')} in ${where}\n`);
    if (result.scriptsAdded.length) io.out(`added the scripts ${result.scriptsAdded.join(', ')} to package.json\n`);
    io.out(`\nnext${where === '.' ? '' : ` (in ${where})`}:\n${result.next.map((l) => `  ${l}`).join('\n')}\n`);
    if (Number(process.versions.node.split('.')[0]) < 24) {
      io.out(
        `\nNode.js ${process.versions.node}: retrysafe recommends Node.js 24 (Node.js 20 is past its end of life).\n`,
      );
    }
    return 0;
  } catch (err) {
    if (!(err instanceof InitRefused)) throw err;
    io.err(`retrysafe init: ${err.message}\n`);
    return 1;
  }
}
