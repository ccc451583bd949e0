// The recipe of docs/operations.md, "The shipped nginx without Docker", run as written (its folder, instance and
// listen address given the test's values; the apt-get line left out): deploy/nginx.conf answers in front of a real
// server, delivery URLs go through its cache, and the recipe's stop command stops it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/app.ts';
import { NGINX } from '../helpers/local-nginx.ts';
import { freePort } from '../helpers/processes.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** The ```sh blocks of the section under `heading`, in order. */
function shellBlocks(text: string, heading: string): string[] {
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no ${heading}`);
  const end = text.indexOf('\n#', start + heading.length + 2);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** `script` with each `NAME=…` line that starts it replaced by the value given here. */
function withValues(script: string, values: Record<string, string>): string {
  let out = script;
  for (const [name, value] of Object.entries(values)) {
    const line = new RegExp(`^${name}=.*$`, 'm');
    assert.match(out, line, `the recipe sets ${name}`);
    out = out.replace(line, `${name}=${value}`);
  }
  return out;
}

test(
  'docs/operations.md: the shipped nginx without Docker runs as written in front of an instance, and stops',
  { skip: existsSync(NGINX) ? false : `${NGINX} is not installed (Debian package nginx-light)` },
  async (t) => {
    const docs = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const [startImgpipe, recipe, stop] = shellBlocks(docs, '### The shipped nginx without Docker');
    assert.ok(startImgpipe && recipe && stop, 'three blocks: start imgpipe, run nginx, stop it');
    const listenDefault = /^LISTEN=(\S+)/m.exec(recipe)?.[1];
    assert.ok(
      startImgpipe.includes(`PUBLIC_BASE_URL=http://${listenDefault} `),
      'imgpipe names the nginx address',
    );
    const [install, ...commands] = recipe.split('\n');
    assert.match(install!, /^sudo apt-get install -y nginx-light\b/);

    const server = await startTestServer(t);
    const dir = mkdtempSync(join(tmpdir(), 'imgpipe-nginx-recipe-'));
    const listen = `127.0.0.1:${await freePort()}`;
    const instance = new URL(server.url).host;
    const values = {
      NGINX_DIR: join(dir, 'nginx'),
      INSTANCE_1: instance,
      INSTANCE_2: instance,
      LISTEN: listen,
    };
    const bash = (script: string) => run('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT });
    t.after(() => {
      // Stops nginx if the test failed before the recipe's stop command did.
      const pidFile = join(values.NGINX_DIR, 'nginx.pid');
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    });

    const { stdout } = await bash(withValues(commands.join('\n'), values));
    assert.deepEqual(
      JSON.parse(stdout),
      { status: 'ok' },
      'the recipe ends with /healthz answered through nginx',
    );
    const delivery = await fetch(
      `http://${listen}/v1/u/someone/bad-signature/w:10/https%3A%2F%2Fexample.com%2Fa.jpg`,
    );
    assert.equal(delivery.status, 403, 'the instance answers the delivery URL');
    assert.ok(delivery.headers.get('x-proxy-cache'), 'through the location with the delivery cache');

    const prefix = Object.entries(values)
      .map(([name, value]) => `${name}=${value}`)
      .join('\n');
    await bash(`${prefix}\n${stop}`);
    const pidFile = join(values.NGINX_DIR, 'nginx.pid');
    for (let i = 0; i < 100 && existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(existsSync(pidFile), false, 'the stop command ends nginx (its pid file is removed)');
  },
);
