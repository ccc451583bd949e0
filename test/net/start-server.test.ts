// startServer settles the config before it builds anything: the context's config names the port listened on, and
// the config it was given is left as it was (nothing patches a config after listen).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/main.ts';

function configFor(dataDir: string, env: Record<string, string> = {}) {
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    ...env,
  });
}

test('PORT=0 without PUBLIC_BASE_URL: the context is built with the port listened on; the given config is unchanged', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-start-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = configFor(dataDir);
  const given = structuredClone(config);
  const server = await startServer(config);
  t.after(() => server.close());
  assert.deepEqual(config, given);
  assert.equal(server.ctx.config.publicBaseUrl, server.url);
  assert.equal(server.ctx.config.port, Number(new URL(server.url).port));
  const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    servers: { url: string }[];
  };
  assert.ok(
    openapi.servers.some((s) => s.url === server.url),
    'the document names the listened address',
  );
});

test('PUBLIC_BASE_URL set: links keep it whatever port is listened on', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-start-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer(configFor(dataDir, { PUBLIC_BASE_URL: 'https://img.example.com' }));
  t.after(() => server.close());
  assert.equal(server.ctx.config.publicBaseUrl, 'https://img.example.com');
  assert.notEqual(new URL(server.url).port, '0');
});
