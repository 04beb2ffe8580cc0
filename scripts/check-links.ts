/**
 * `npm run docs:links`: every relative link in the README, the CHANGELOG and docs/ must name a file of the repository,
 * and every `#anchor` a heading of the page it points into (GitHub's anchors: lower case, punctuation dropped,
 * spaces as hyphens). Web links are not fetched: this machine, like CI, reaches only package registries.
 * The README is also the package's page on npm and its front door inside node_modules/retrysafe: each of its relative
 * links must name a file the tarball ships (`npm pack --dry-run` lists them), or a folder it ships files under.
 * Prints each broken link with its file and line, and exits 1 when there is one.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  why: string;
}

/** GitHub's anchor for a heading's text. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a markdown file's headings (outside code fences), numbered as GitHub numbers repeats. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = anchorOf(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The links of a markdown file, outside code fences and inline code, with their line numbers. */
export function linksOf(markdown: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  let fenced = false;
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) fenced = !fenced;
    if (fenced) return;
    const prose = text.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      links.push({ line: i + 1, target: m[1] });
  });
  return links;
}

export function checkFile(file: string, root = ROOT): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const text = readFileSync(file, 'utf8');
  for (const { line, target } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [rel, anchor] = target.split('#') as [string, string | undefined];
    const dest = rel === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(rel));
    const where = { file: path.relative(root, file), line, target };
    if (!dest.startsWith(root)) {
      broken.push({ ...where, why: 'points outside the repository' });
      continue;
    }
    if (!existsSync(dest)) {
      broken.push({ ...where, why: 'no such file' });
      continue;
    }
    if (anchor !== undefined && dest.endsWith('.md') && !anchorsOf(readFileSync(dest, 'utf8')).has(anchor)) {
      broken.push({ ...where, why: `no heading #${anchor} in ${path.relative(root, dest)}` });
    }
  }
  return broken;
}

/** The markdown files the checker reads: the README, the CHANGELOG and everything under docs/ (not docs/api/). */
export function documentationFiles(root = ROOT): string[] {
  const files = ['README.md', 'CHANGELOG.md'].map((f) => path.join(root, f)).filter((f) => existsSync(f));
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        if (name !== 'api') walk(full);
      } else if (name.endsWith('.md')) files.push(full);
    }
  };
  if (existsSync(path.join(root, 'docs'))) walk(path.join(root, 'docs'));
  return files;
}

/** The files `npm pack` would put in the tarball, relative to the package root. Lifecycle scripts are skipped: the
 * build adds only dist/, which no link names. */
export function packedFiles(root = ROOT): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [{ files }] = JSON.parse(out.slice(out.indexOf('['))) as Array<{ files: Array<{ path: string }> }>;
  return files.map((f) => f.path);
}

/** The relative links of `readme` (at the package root) that name neither a file of `packed` nor a folder of them. */
export function linksOutsideTarball(readme: string, packed: readonly string[], root = ROOT): BrokenLink[] {
  const shipped = new Set(packed.map((f) => f.split(path.sep).join('/')));
  const broken: BrokenLink[] = [];
  for (const { line, target } of linksOf(readFileSync(readme, 'utf8'))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [rel] = target.split('#');
    if (rel === '') continue;
    const inPackage = path.relative(root, path.resolve(path.dirname(readme), decodeURIComponent(rel)));
    const name = inPackage.split(path.sep).join('/');
    if (shipped.has(name) || [...shipped].some((f) => f.startsWith(`${name.replace(/\/$/, '')}/`))) continue;
    broken.push({
      file: path.relative(root, readme),
      line,
      target,
      why: 'not in the package: npm users cannot follow it (add it to "files" in package.json, or link elsewhere)',
    });
  }
  return broken;
}

if (require.main === module) {
  const files = documentationFiles();
  const broken = [
    ...files.flatMap((f) => checkFile(f)),
    ...linksOutsideTarball(path.join(ROOT, 'README.md'), packedFiles()),
  ];
  for (const b of broken) process.stderr.write(`${b.file}:${b.line}: ${b.target}: ${b.why}\n`);
  process.stderr.write(`${files.length} files, ${broken.length} broken link(s)\n`);
  process.exitCode = broken.length === 0 ? 0 : 1;
}
