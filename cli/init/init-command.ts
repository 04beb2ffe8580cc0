/**
 * `retrysafe init`: a working project in an empty folder or one `npm init -y` just made. It writes a tool, a fake
 * provider for it (so the first action succeeds with nothing else running), a worker with retrysafe's plugin, a client
 * that claims an action, a tsconfig and package scripts, then prints what to install and run: commands that say what
 * they do (`npx tsc -p .`, `node --env-file=.retrysafe/dev.env dist/worker.js`), which the scripts are shortcuts for.
 * It overwrites nothing unless told to (`--force`); package.json only gains the scripts it lacks.
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
  const targets = (await templateFiles()).map((from) => ({ from, to: targetName(from) }));
  refuseToOverwrite(dir, targets, opts.force === true);
  const pkgFile = path.join(dir, 'package.json');
  const pkgText = existsSync(pkgFile) ? await readFile(pkgFile, 'utf8') : undefined;
  const pkg = parsePackageJson(dir, pkgText);
  const written = await writeTemplate(dir, targets);
  const scriptsAdded = await addScripts(pkgFile, pkg);
  if (pkgText === undefined) written.push('package.json');
  return { written, scriptsAdded, next: nextCommands(pkg, opts.nodeVersion ?? process.versions.node) };
}

type Target = { from: string; to: string };

/** Throws InitRefused when a file init would write exists already (a .gitignore is added to, never replaced). */
function refuseToOverwrite(dir: string, targets: readonly Target[], force: boolean): void {
  const existing = targets.filter((t) => t.to !== '.gitignore' && existsSync(path.join(dir, t.to))).map((t) => t.to);
  if (existing.length === 0 || force) return;
  throw new InitRefused(
    `${existing.join(', ')} already exist${existing.length === 1 ? 's' : ''} in ${dir}; nothing was written ` +
      '(retrysafe init scaffolds an empty or fresh npm project; --force overwrites them)',
  );
}

/** The project's package.json, or a new one named after the folder; InitRefused when it cannot be read. */
function parsePackageJson(dir: string, pkgText: string | undefined): z.infer<typeof PackageJson> {
  try {
    return PackageJson.parse(
      pkgText === undefined ? { name: packageName(dir), version: '1.0.0', private: true } : JSON.parse(pkgText),
    );
  } catch (err) {
    const issue = err instanceof z.ZodError ? err.issues[0] : undefined;
    const where = issue ? `${issue.path.join('.')}: ${issue.message}` : (err as Error).message;
    throw new InitRefused(`package.json: ${where}; nothing was written`);
  }
}

/** Copies the template into `dir`; a .gitignore there only gains the lines it lacks. Answers what it wrote. */
async function writeTemplate(dir: string, targets: readonly Target[]): Promise<string[]> {
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
  return written;
}

/** Writes package.json with the scripts it lacks of INIT_SCRIPTS; answers their names. */
async function addScripts(pkgFile: string, pkg: z.infer<typeof PackageJson>): Promise<string[]> {
  const scripts = { ...(pkg.scripts ?? {}) };
  const added = Object.keys(INIT_SCRIPTS).filter((name) => scripts[name] === undefined);
  for (const name of added) scripts[name] = INIT_SCRIPTS[name];
  await writeFile(pkgFile, `${JSON.stringify({ ...pkg, scripts }, null, 2)}\n`);
  return added;
}

/**
 * What to run next, each a command that says what it does (the package scripts init adds are shortcuts for the same):
 * the installs the project lacks, the build, `retrysafe dev`, the worker and the client with the settings it wrote.
 */
function nextCommands(pkg: z.infer<typeof PackageJson>, nodeVersion: string): string[] {
  const has = (name: string) => pkg.dependencies?.[name] !== undefined || pkg.devDependencies?.[name] !== undefined;
  // Before Node.js 22.13 the SQLite ledger of `retrysafe dev` needs better-sqlite3; from then on node:sqlite.
  const [major, minor] = nodeVersion.split('.').map(Number);
  const sqlite = major < 22 || (major === 22 && minor < 13) ? ['better-sqlite3'] : [];
  const missing = [...INIT_DEPENDENCIES, ...sqlite].filter((name) => !has(name));
  const missingDev = INIT_DEV_DEPENDENCIES.filter((name) => !has(name));
  return [
    ...(missing.length ? [`npm install ${missing.join(' ')}`] : []),
    ...(missingDev.length ? [`npm install --save-dev ${missingDev.join(' ')}`] : []),
    ...NEXT_RUN_COMMANDS,
  ];
}

/** Build, then each long-running command in its own terminal, then the first action (README.md shows the same). */
export const NEXT_RUN_COMMANDS: readonly string[] = aligned([
  [`npx ${INIT_SCRIPTS.build}`],
  ['npx retrysafe dev', 'keeps running: a second terminal for the rest'],
  [INIT_SCRIPTS.worker, 'keeps running: a third terminal'],
  [`${INIT_SCRIPTS.client} launch-1 "We are live"`, 'the first action, printed once confirmed'],
]);

/** Commands with their comments lined up. */
function aligned(lines: ReadonlyArray<readonly [string, string?]>): string[] {
  const width = Math.max(...lines.map(([command]) => command.length));
  return lines.map(([command, comment]) => (comment ? `${command.padEnd(width)}   # ${comment}` : command));
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
