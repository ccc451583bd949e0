// What `serve`'s start line must set before Node starts (bin/serve-environment.js): the recommended values, that an
// operator's own values stand, the warning when one is missing, and that every start line shipped sets them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  glibcTunablesFor,
  mallocTunablesFor,
  nodeOptionsFor,
  serveEnvironmentFor,
  threadPoolSizeFor,
} from '../../bin/serve-environment.js';
import { warnOfMissingEnvironment } from '../../src/main.ts';

const OURS = 'glibc.malloc.arena_max=1';
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

test('serve environment: the pool has a thread per job slot, plus two, within 4 and 1024; fetches need none', () => {
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '8', MAX_CONCURRENT_FETCHES: '4' }), 10);
  assert.equal(threadPoolSizeFor({}), 4);
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_FETCHES: '64' }), 4);
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '1', MAX_CONCURRENT_FETCHES: '1' }), 4);
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '2000' }), 1024);
});

test('serve environment: an operator-set UV_THREADPOOL_SIZE of at least that size needs nothing; a short one is named', () => {
  assert.equal(
    serveEnvironmentFor({ UV_THREADPOOL_SIZE: '16', GLIBC_TUNABLES: OURS }).UV_THREADPOOL_SIZE,
    undefined,
  );
  assert.equal(
    serveEnvironmentFor({ UV_THREADPOOL_SIZE: '8', MAX_CONCURRENT_JOBS: '8', GLIBC_TUNABLES: OURS })
      .UV_THREADPOOL_SIZE,
    '10',
  );
});

test('serve environment: without GLIBC_TUNABLES serve needs a malloc arena per two job slots', () => {
  assert.equal(glibcTunablesFor({}), OURS);
  assert.deepEqual(mallocTunablesFor({ MAX_CONCURRENT_JOBS: '1' }), { 'glibc.malloc.arena_max': '1' });
  assert.deepEqual(mallocTunablesFor({ MAX_CONCURRENT_JOBS: '3' }), { 'glibc.malloc.arena_max': '2' });
  assert.deepEqual(mallocTunablesFor({ MAX_CONCURRENT_JOBS: '8' }), { 'glibc.malloc.arena_max': '4' });
});

test('serve environment: an operator-set GLIBC_TUNABLES keeps its own values, and lacks only the arena count it does not name', () => {
  assert.equal(glibcTunablesFor({ GLIBC_TUNABLES: 'glibc.pthread.rseq=0' }), `glibc.pthread.rseq=0:${OURS}`);
  assert.equal(glibcTunablesFor({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=3' }), undefined);
});

test("serve environment: NODE_OPTIONS gets V8's semi-space size unless it or node's own arguments name one", () => {
  assert.equal(nodeOptionsFor({}), '--max-semi-space-size=1');
  assert.equal(
    nodeOptionsFor({ NODE_OPTIONS: '--enable-source-maps' }),
    '--enable-source-maps --max-semi-space-size=1',
  );
  assert.equal(nodeOptionsFor({ NODE_OPTIONS: '--max-semi-space-size=16' }), undefined);
  assert.equal(nodeOptionsFor({}, ['--max-semi-space-size=2']), undefined);
});

test('serve environment: one warning per missing variable, naming it and the value to set; none when complete', () => {
  const warnings: string[] = [];
  const log = { warn: (_fields: object, message: string) => warnings.push(message) };
  warnOfMissingEnvironment(log as never, { UV_THREADPOOL_SIZE: '8', GLIBC_TUNABLES: OURS }, [
    '--max-semi-space-size=1',
  ]);
  assert.equal(warnings.length, 0);
  warnOfMissingEnvironment(log as never, { MAX_CONCURRENT_JOBS: '4' });
  assert.equal(warnings.length, 3);
  assert.match(warnings[0] as string, /UV_THREADPOOL_SIZE=6\b/);
  assert.ok((warnings[1] as string).includes('GLIBC_TUNABLES=glibc.malloc.arena_max=2'));
  assert.ok((warnings[2] as string).includes('NODE_OPTIONS=--max-semi-space-size=1'));
});

test('serve environment: the Dockerfile, compose.yaml, npm start and the README start line set what serve needs', () => {
  const pool = String(threadPoolSizeFor({}));
  const dockerfile = read('Dockerfile');
  assert.match(dockerfile, new RegExp(`UV_THREADPOOL_SIZE=${pool}\\b`));
  assert.ok(dockerfile.includes(`GLIBC_TUNABLES=${OURS} \\\n`));
  assert.ok(dockerfile.includes(`NODE_OPTIONS=${nodeOptionsFor({})}\n`));
  const compose = read('compose.yaml');
  const jobs = /MAX_CONCURRENT_JOBS: '(\d+)'/.exec(compose)?.[1];
  const fetches = /MAX_CONCURRENT_FETCHES: '(\d+)'/.exec(compose)?.[1];
  const composePool = threadPoolSizeFor({ MAX_CONCURRENT_JOBS: jobs, MAX_CONCURRENT_FETCHES: fetches });
  assert.match(compose, new RegExp(`UV_THREADPOOL_SIZE: '${composePool}'`));
  assert.ok(compose.includes(`NODE_OPTIONS: ${nodeOptionsFor({})}\n`));
  const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
  assert.ok(start.includes(`UV_THREADPOOL_SIZE=\${UV_THREADPOOL_SIZE:-${pool}}`), start);
  assert.ok(start.includes(`GLIBC_TUNABLES=\${GLIBC_TUNABLES:-${OURS}}`), start);
  assert.ok(start.includes(`NODE_OPTIONS=\${NODE_OPTIONS:-${nodeOptionsFor({})}}`), start);
  const readme = read('README.md');
  assert.ok(
    readme.includes(
      `UV_THREADPOOL_SIZE=${pool} \\\nGLIBC_TUNABLES=${OURS} \\\nNODE_OPTIONS=${nodeOptionsFor({})} \\\nnode bin/imgpipe.js serve`,
    ),
  );
});
