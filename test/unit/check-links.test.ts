import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  anchorOf,
  anchorsOf,
  checkFile,
  documentationFiles,
  linksOf,
  linksOutsideTarball,
  packedFiles,
} from '../../scripts/check-links';

describe('the documentation link check', () => {
  it('spells anchors as GitHub does', () => {
    assert.equal(anchorOf('Guarantees and limits'), 'guarantees-and-limits');
    assert.equal(anchorOf('`retrysafe dev`'), 'retrysafe-dev');
    assert.equal(anchorOf('Chaos: crashes counted at the providers'), 'chaos-crashes-counted-at-the-providers');
    assert.equal(
      anchorOf('Peers: Restate and DBOS, `npm run bench:peers`'),
      'peers-restate-and-dbos-npm-run-benchpeers',
    );
    assert.deepEqual([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n### B')], ['a', 'a-1', 'b']);
  });

  it('reads links outside code, with their lines', () => {
    const links = linksOf('see [x](a.md#b)\n`[no](c.md)`\n```\n[no](d.md)\n```\n![img](e.png "t")');
    assert.deepEqual(links, [
      { line: 1, target: 'a.md#b' },
      { line: 6, target: 'e.png' },
    ]);
  });

  it('reports a missing file, a missing anchor and a link out of the repository, and passes good links', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-links-'));
    try {
      await mkdir(path.join(root, 'docs'));
      await writeFile(path.join(root, 'docs', 'guide.md'), '# Guide\n\n## Install it\n');
      await writeFile(
        path.join(root, 'README.md'),
        [
          '[ok](docs/guide.md#install-it)',
          '[gone](docs/missing.md)',
          '[anchor](docs/guide.md#no-such)',
          '[out](../elsewhere.md)',
          '[web](https://example.com/x)',
          '[self](#top)',
          '# Top',
        ].join('\n'),
      );
      const broken = checkFile(path.join(root, 'README.md'), root);
      assert.deepEqual(
        broken.map((b) => [b.line, b.target, b.why]),
        [
          [2, 'docs/missing.md', 'no such file'],
          [3, 'docs/guide.md#no-such', 'no heading #no-such in docs/guide.md'],
          [4, '../elsewhere.md', 'points outside the repository'],
        ],
      );
      assert.deepEqual(
        documentationFiles(root).map((f) => path.relative(root, f)),
        ['README.md', path.join('docs', 'guide.md')],
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('reports a README link to a file or folder the tarball does not ship', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-links-'));
    try {
      const readme = path.join(root, 'README.md');
      await writeFile(
        readme,
        [
          '[guide](docs/guide.md#x)',
          '[folder](deploy/)',
          '[test](test/project/)',
          '[src](src/a.ts)',
          '[web](https://x)',
        ].join('\n'),
      );
      const broken = linksOutsideTarball(readme, ['README.md', 'docs/guide.md', 'deploy/rules.yml'], root);
      assert.deepEqual(
        broken.map((b) => [b.line, b.target]),
        [
          [3, 'test/project/'],
          [4, 'src/a.ts'],
        ],
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("finds every relative link of this README in the package's tarball", () => {
    const packed = packedFiles();
    assert.ok(packed.includes('docs/guarantees.md') && packed.includes('deploy/prometheus/retrysafe-rules.yml'));
    assert.deepEqual(linksOutsideTarball(path.resolve(__dirname, '..', '..', 'README.md'), packed), []);
  });

  it('finds no broken link in this repository', () => {
    assert.deepEqual(
      documentationFiles().flatMap((f) => checkFile(f)),
      [],
    );
  });
});
