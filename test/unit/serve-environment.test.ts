// What `serve`'s start line must set before Node starts (bin/serve-environment.js): the thread pool's size, that an
// operator's own value stands, the warning when it is missing, and that every start line shipped sets it and nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { serveEnvironmentFor, threadPoolSizeFor } from '../../bin/serve-environment.js';
import { warnOfMissingEnvironment } from '../../src/main.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

test('serve environment: the pool has a thread per job slot, plus two, within 4 and 1024; fetches need none', () => {
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '8', MAX_CONCURRENT_FETCHES: '4' }), 10);
  assert.equal(threadPoolSizeFor({}), 4);
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_FETCHES: '64' }), 4);
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '1', MAX_CONCURRENT_FETCHES: '1' }), 4);
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '2000' }), 1024);
});

test('serve environment: an operator-set UV_THREADPOOL_SIZE of at least that size needs nothing; a short one is named', () => {
  assert.deepEqual(serveEnvironmentFor({ UV_THREADPOOL_SIZE: '16' }), {});
  assert.deepEqual(serveEnvironmentFor({ UV_THREADPOOL_SIZE: '8', MAX_CONCURRENT_JOBS: '8' }), {
    UV_THREADPOOL_SIZE: '10',
  });
  assert.deepEqual(serveEnvironmentFor({}), { UV_THREADPOOL_SIZE: '4' });
});

test('serve environment: one warning when the thread pool is missing or short, naming the value to set; none when set', () => {
  const warnings: string[] = [];
  const log = { warn: (_fields: object, message: string) => warnings.push(message) };
  warnOfMissingEnvironment(log as never, { UV_THREADPOOL_SIZE: '8' });
  assert.equal(warnings.length, 0);
  warnOfMissingEnvironment(log as never, { MAX_CONCURRENT_JOBS: '4' });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] as string, /UV_THREADPOOL_SIZE=6\b/);
});

test('serve environment: the Dockerfile, compose.yaml, npm start and the README start line set the thread pool and leave malloc and V8 at their defaults', () => {
  const pool = String(threadPoolSizeFor({}));
  const capped = /GLIBC_TUNABLES|max-semi-space-size/;
  const dockerfile = read('Dockerfile');
  assert.match(dockerfile, new RegExp(`UV_THREADPOOL_SIZE=${pool}\\b`));
  assert.doesNotMatch(dockerfile, capped);
  const compose = read('compose.yaml');
  const jobs = /MAX_CONCURRENT_JOBS: '(\d+)'/.exec(compose)?.[1];
  const fetches = /MAX_CONCURRENT_FETCHES: '(\d+)'/.exec(compose)?.[1];
  const composePool = threadPoolSizeFor({ MAX_CONCURRENT_JOBS: jobs, MAX_CONCURRENT_FETCHES: fetches });
  assert.match(compose, new RegExp(`UV_THREADPOOL_SIZE: '${composePool}'`));
  assert.doesNotMatch(compose, capped);
  const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
  assert.ok(start.includes(`UV_THREADPOOL_SIZE=\${UV_THREADPOOL_SIZE:-${pool}}`), start);
  assert.doesNotMatch(start, capped);
  const readme = read('README.md');
  assert.ok(readme.includes(`UV_THREADPOOL_SIZE=${pool} \\\nnode bin/imgpipe.js serve`));
});
