// `npm ci` on the Node that runs this suite, as a stranger's clone runs it: every warning it prints is one the
// README's quick start explains. npm's own check of the lockfile (--dry-run --offline: nothing fetched or written),
// in a folder holding only what npm reads, with no user configuration and none inherited from an `npm test` parent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What `npm ci --dry-run` prints on stderr for this project's package.json, lockfile and .npmrc. */
function npmCiOutput(): string {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-npm-ci-'));
  try {
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) {
      copyFileSync(join(ROOT, file), join(dir, file));
    }
    const userConfig = join(dir, 'user.npmrc');
    writeFileSync(userConfig, '');
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')),
    );
    const npm = spawnSync(
      'npm',
      ['ci', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
      {
        cwd: dir,
        env: { ...env, npm_config_userconfig: userConfig },
        encoding: 'utf8',
      },
    );
    assert.equal(npm.status, 0, npm.stderr);
    return npm.stderr;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('npm ci warns only of what the README explains: each package an EBADENGINE names, and nothing else', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const output = npmCiOutput();
  const warnings = output.split('\n').filter((line) => line.startsWith('npm warn'));
  const engines = [...output.matchAll(/npm warn EBADENGINE\s+package: '([^']+)'/g)].map((m) => m[1]!);
  const unexplained = [
    ...engines.filter((pkg) => !readme.includes(`\`${pkg}\``)),
    ...warnings.filter((line) => !line.startsWith('npm warn EBADENGINE')),
  ];
  assert.deepEqual(unexplained, [], output);
});
