import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashApiKey } from '../../src/accounts/api-key.ts';
import { openStore } from '../../src/store/db.ts';
import { findActiveKeyOwner } from '../../src/store/keys.ts';
import { runCli } from '../helpers/process.ts';

function cliEnv(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { DATA_DIR: dir, LOG_LEVEL: 'silent' };
}

async function keyOwner(env: { DATA_DIR: string }, key: string) {
  const store = openStore(`sqlite:${join(env.DATA_DIR, 'imgpipe.db')}`, {
    poolSize: 1,
    statementTimeoutMs: 2000,
  });
  try {
    return await findActiveKeyOwner(store.db, hashApiKey(key));
  } finally {
    await store.close();
  }
}

test('imgpipe migrate creates the schema and exits 0', async (t) => {
  const env = cliEnv(t);
  const res = await runCli(['migrate'], env);
  assert.equal(res.code, 0, res.stderr);
  assert.ok(existsSync(join(env.DATA_DIR, 'imgpipe.db')));
});

test('imgpipe keys create prints the key alone on stdout, for the account and tier given', async (t) => {
  const env = cliEnv(t);
  const res = await runCli(['keys', 'create', '--email', 'Ops@Example.com', '--tier', 'growth'], env);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /^imgp_[0-9A-Za-z]{32,}\n$/);
  const owner = await keyOwner(env, res.stdout.trim());
  assert.equal(owner?.tier, 'growth');
  assert.equal(owner?.email, 'Ops@example.com');
});

test('imgpipe keys create again revokes the previous key and can change the tier', async (t) => {
  const env = cliEnv(t);
  const first = (
    await runCli(['keys', 'create', '--email', 'a@example.com', '--tier', 'free'], env)
  ).stdout.trim();
  const second = await runCli(['keys', 'create', '--email', 'A@example.com', '--tier', 'scale'], env);
  assert.equal(second.code, 0);
  assert.equal(await keyOwner(env, first), undefined);
  assert.equal((await keyOwner(env, second.stdout.trim()))?.tier, 'scale');
});

test('imgpipe keys revoke revokes the active key and confirms on stderr', async (t) => {
  const env = cliEnv(t);
  const key = (
    await runCli(['keys', 'create', '--email', 'b@example.com', '--tier', 'starter'], env)
  ).stdout.trim();
  const res = await runCli(['keys', 'revoke', '--email', 'b@example.com'], env);
  assert.equal(res.code, 0);
  assert.equal(res.stdout, '');
  assert.match(res.stderr, /revoked/);
  assert.equal(await keyOwner(env, key), undefined);
});

test('imgpipe accounts show prints e-mail, tier, key state and usage this month', async (t) => {
  const env = cliEnv(t);
  await runCli(['keys', 'create', '--email', 'c@example.com', '--tier', 'starter'], env);
  const res = await runCli(['accounts', 'show', '--email', 'C@EXAMPLE.COM'], env);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /email: c@example\.com/);
  assert.match(res.stdout, /tier: starter/);
  assert.match(res.stdout, /key: active/);
  assert.match(res.stdout, /usage \d{4}-\d{2}: 0 of 5000/);
});

test('an unknown e-mail for revoke or show exits 1', async (t) => {
  const env = cliEnv(t);
  assert.equal((await runCli(['migrate'], env)).code, 0, 'the database exists');
  for (const args of [
    ['keys', 'revoke', '--email', 'nobody@example.com'],
    ['accounts', 'show', '--email', 'nobody@example.com'],
  ]) {
    const res = await runCli(args, env);
    assert.equal(res.code, 1, args.join(' '));
    assert.match(res.stderr, /no account/);
  }
});

test('bad arguments exit 2 with a usage message', async (t) => {
  const env = cliEnv(t);
  for (const args of [
    [],
    ['frobnicate'],
    ['keys'],
    ['keys', 'create', '--email', 'd@example.com'],
    ['keys', 'create', '--email', 'd@example.com', '--tier', 'platinum'],
    ['keys', 'create', '--tier', 'free'],
    ['keys', 'revoke'],
    ['accounts', 'show', '--email', 'd@example.com', '--verbose'],
    ['migrate', 'now'],
  ]) {
    const res = await runCli(args, env);
    assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
    assert.match(res.stderr, /usage: imgpipe/);
  }
});

test('an invalid environment variable stops the command, naming the variable', async (t) => {
  const env = cliEnv(t);
  const res = await runCli(['migrate'], { ...env, MAX_UPLOAD_BYTES: 'big' });
  assert.notEqual(res.code, 0);
  assert.match(res.stderr, /MAX_UPLOAD_BYTES/);
});
