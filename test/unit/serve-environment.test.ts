// What bin/imgpipe.js adds to `serve`'s environment before Node starts (thread pool, malloc thresholds), and that an
// operator's own values stand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  glibcTunablesFor,
  MALLOC_TUNABLES,
  serveEnvironmentFor,
  threadPoolSizeFor,
} from '../../bin/serve-environment.js';

const OURS = 'glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=16777216';

test('serve environment: without UV_THREADPOOL_SIZE the pool has a thread per job slot and per fetch, plus two', () => {
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '8', MAX_CONCURRENT_FETCHES: '4' }), 14);
  assert.equal(threadPoolSizeFor({}), 8);
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '1', MAX_CONCURRENT_FETCHES: '1' }), 4);
  assert.equal(threadPoolSizeFor({ MAX_CONCURRENT_JOBS: '2000' }), 1024);
});

test('serve environment: an operator-set UV_THREADPOOL_SIZE stands', () => {
  assert.equal(threadPoolSizeFor({ UV_THREADPOOL_SIZE: '3', MAX_CONCURRENT_JOBS: '8' }), undefined);
});

test('serve environment: without GLIBC_TUNABLES serve gets the malloc thresholds', () => {
  assert.equal(glibcTunablesFor({}), OURS);
  assert.deepEqual(Object.keys(MALLOC_TUNABLES).sort(), [
    'glibc.malloc.mmap_threshold',
    'glibc.malloc.trim_threshold',
  ]);
});

test('serve environment: an operator-set GLIBC_TUNABLES keeps its own values, and gets only the thresholds it does not name', () => {
  assert.equal(glibcTunablesFor({ GLIBC_TUNABLES: 'glibc.pthread.rseq=0' }), `glibc.pthread.rseq=0:${OURS}`);
  assert.equal(
    glibcTunablesFor({ GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=1048576' }),
    'glibc.malloc.trim_threshold=1048576:glibc.malloc.mmap_threshold=8388608',
  );
  assert.equal(
    glibcTunablesFor({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=1:glibc.malloc.trim_threshold=2' }),
    undefined,
  );
});

test('serve environment: nothing is added when both are complete, so serve starts without a relaunch', () => {
  assert.deepEqual(serveEnvironmentFor({ UV_THREADPOOL_SIZE: '4', GLIBC_TUNABLES: OURS }), {});
  assert.deepEqual(serveEnvironmentFor({ MAX_CONCURRENT_JOBS: '2' }), {
    UV_THREADPOOL_SIZE: '8',
    GLIBC_TUNABLES: OURS,
  });
});
