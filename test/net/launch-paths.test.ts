// Every launch path stops on SIGTERM and SIGINT: npm start (the signal goes to npm's own pid), npx imgpipe
// serve, node bin/imgpipe.js serve and the Dockerfile's CMD. Idle: exit 0 at once, not at SHUTDOWN_TIMEOUT_MS; in
// flight: the request finishes, then exit 0. Plus what start-up prints and the links it makes without PUBLIC_BASE_URL.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { imageForm } from '../helpers/multipart.ts';
import { killOnExit } from '../helpers/spawned.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEV_KEY = `imgp_${'L'.repeat(40)}`;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The Dockerfile's CMD, read from the Dockerfile itself so the test follows it. */
function dockerCmd(): string[] {
  const line = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('CMD '));
  assert.ok(line, 'the Dockerfile has a CMD');
  return JSON.parse(line.slice(4)) as string[];
}

const LAUNCH_PATHS: Record<string, () => [string, string[]]> = {
  'npm start': () => [npm, ['start', '--silent']],
  'npx imgpipe serve': () => ['npx', ['--no-install', 'imgpipe', 'serve']],
  'node bin/imgpipe.js serve': () => [process.execPath, ['bin/imgpipe.js', 'serve']],
  "the Dockerfile's CMD": () => {
    const [command, ...args] = dockerCmd();
    return [command === 'node' ? process.execPath : (command as string), args];
  },
};

interface Launched {
  child: ChildProcess;
  url: string;
  /** The pid of the node process that serves (npm and npx run it as a child). */
  serverPid: number;
  output: () => string;
  exit: Promise<number | null>;
}

async function launch(
  t: TestContext,
  path: string,
  env: Record<string, string> = {},
  cwd = ROOT,
): Promise<Launched> {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgpipe-launch-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const [command, args] = (LAUNCH_PATHS[path] as () => [string, string[]])();
  const child = killOnExit(
    spawn(command, args, {
      cwd,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        DEV_KEY,
        LOG_LEVEL: 'info',
        NODE_ENV: 'test',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = Date.now();
  let match: RegExpExecArray | null = null;
  while (!(match = /"pid":(\d+)[^\n]*Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output))) {
    if (child.exitCode !== null || Date.now() - started > 60_000) {
      throw new Error(`${path} did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: match[2] as string, serverPid: Number(match[1]), output: () => output, exit };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves with the exit code, or rejects when the process is still running after `limitMs`. */
function exitWithin(launched: Launched, limitMs: number): Promise<number | null> {
  return Promise.race([
    launched.exit,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`still running ${limitMs} ms after the signal`)), limitMs),
    ),
  ]);
}

/** SHUTDOWN_TIMEOUT_MS of the idle-stop tests. */
const IDLE_SHUTDOWN_TIMEOUT_MS = 120_000;

for (const path of Object.keys(LAUNCH_PATHS)) {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`${path}: an idle server stops on ${signal} with exit code 0 without waiting for SHUTDOWN_TIMEOUT_MS`, async (t) => {
      // The shutdown timeout is far beyond the wait, and the wait far beyond any start-up delay under load: a
      // server that held on to its idle connections or timers until the timeout would fail, whatever the load.
      const launched = await launch(t, path, { SHUTDOWN_TIMEOUT_MS: String(IDLE_SHUTDOWN_TIMEOUT_MS) });
      launched.child.kill(signal);
      assert.equal(await exitWithin(launched, IDLE_SHUTDOWN_TIMEOUT_MS / 4), 0, launched.output());
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(isRunning(launched.serverPid), false, 'the node server is gone too');
    });
  }

  test(`${path}: on SIGTERM a request in flight finishes with 200, then exit 0`, async (t) => {
    const launched = await launch(t, path);
    const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#357' } })
      .jpeg()
      .toBuffer();
    const form = imageForm(jpeg, { format: 'png' });
    const answer = new Promise<number>((resolve, reject) => {
      const req = request(`${launched.url}/v1/image`, {
        method: 'POST',
        headers: {
          ...form.headers,
          'content-length': form.payload.length,
          authorization: `Bearer ${DEV_KEY}`,
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      // Half the body now, the signal, then the rest: the request is in flight when the signal arrives.
      req.write(form.payload.subarray(0, 100));
      setTimeout(() => {
        launched.child.kill('SIGTERM');
        setTimeout(() => req.end(form.payload.subarray(100)), 300);
      }, 200);
    });
    assert.equal(await answer, 200);
    assert.equal(await exitWithin(launched, 10_000), 0, launched.output());
  });
}

test('PUBLIC_BASE_URL unset: links, e-mails and the OpenAPI servers entry use the address actually listened on', async (t) => {
  const launched = await launch(t, 'node bin/imgpipe.js serve', { DEV_KEY: '' });
  t.after(() => launched.child.kill('SIGKILL'));
  const port = new URL(launched.url).port;
  const base = `http://127.0.0.1:${port}`;
  const openapi = (await (await fetch(`${launched.url}/openapi.json`)).json()) as {
    servers: { url: string }[];
  };
  assert.deepEqual(
    openapi.servers.map((s) => s.url),
    ['/', base],
    'relative first: /docs calls the origin it was loaded from',
  );
  const checkout = await fetch(`${launched.url}/v1/billing/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'starter', email: 'port@example.com' }),
  });
  assert.ok(((await checkout.json()) as { url: string }).url.startsWith(`${base}/dev/billing/checkout/`));
  await fetch(`${launched.url}/v1/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'port@example.com' }),
  });
  const started = Date.now();
  while (!/Open it|signup\/verify\?token=/.test(launched.output()) && Date.now() - started < 10_000) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.match(launched.output(), new RegExp(`${base}/v1/signup/verify\\?token=`), 'the mail link');
  assert.doesNotMatch(
    launched.output(),
    /\/\/localhost/,
    'one address: the listened one, never a second name',
  );
});

test('start-up prints one block a human can read: API, playground, docs, pricing and the new dev key', async (t) => {
  const launched = await launch(t, 'node bin/imgpipe.js serve', { DEV_KEY: '' });
  t.after(() => launched.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${new URL(launched.url).port}`;
  const started = Date.now();
  while (!/your key|need a key/.test(launched.output()) && Date.now() - started < 10_000) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const out = launched.output();
  for (const line of [
    `${base}/v1/image`,
    `${base}/`,
    `${base}/docs`,
    `${base}/pricing`,
    `${base}/dev/mail`,
  ]) {
    assert.ok(out.includes(line), line);
  }
  assert.match(out, /your key\s+imgp_[0-9A-Za-z]{32,}/);
});

test('node bin/imgpipe.js serve: SIGKILL of the launched pid leaves no server running', async (t) => {
  const launched = await launch(t, 'node bin/imgpipe.js serve');
  launched.child.kill('SIGKILL');
  await launched.exit;
  const started = Date.now();
  while (isRunning(launched.serverPid) && Date.now() - started < 5000) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(isRunning(launched.serverPid), false);
});

interface DockerCopy {
  /** The stage the files come from (`COPY --from=<stage>`), or undefined for the build context. */
  from: string | undefined;
  sources: string[];
  dest: string;
}

/** The Dockerfile's stages by name (the last one, the image, under ''), each with its COPY lines in order. */
function dockerStages(): Map<string, DockerCopy[]> {
  const stages = new Map<string, DockerCopy[]>();
  let current: DockerCopy[] = [];
  for (const line of readFileSync(join(ROOT, 'Dockerfile'), 'utf8').split('\n')) {
    if (line.startsWith('FROM ')) {
      current = [];
      stages.set(/ AS (\S+)/i.exec(line)?.[1] ?? '', current);
    } else if (line.startsWith('COPY ')) {
      const words = line.slice(5).trim().split(/\s+/);
      const from = words[0]?.startsWith('--from=') ? words.shift()?.slice(7) : undefined;
      current.push({ from, sources: words.slice(0, -1), dest: words.at(-1) as string });
    }
  }
  return stages;
}

/**
 * The top-level packages `npm prune --omit=dev` keeps, from package-lock.json: the image's node_modules, linked
 * here to this checkout's installed copies.
 */
function productionNodeModules(into: string): void {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; link?: boolean }>;
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) || entry.dev || entry.link) continue;
    if (!existsSync(join(ROOT, path))) continue; // an optional package of another platform
    mkdirSync(dirname(join(into, path)), { recursive: true });
    symlinkSync(join(ROOT, path), join(into, path));
  }
}

/**
 * The Dockerfile's image, laid out as its stages would: the build stage's files and its build (what its `npm ci`
 * runs as "prepare"), then the image's copies from the context and from that stage, with the production
 * dependencies only.
 */
function dockerImage(t: TestContext): string {
  const stages = dockerStages();
  const image = stages.get('');
  assert.ok(image, 'the Dockerfile has an image stage');
  const built = new Map<string, string>();
  for (const [name, copies] of stages) {
    if (name === '') continue;
    const dir = mkdtempSync(join(tmpdir(), `imgpipe-${name}-`));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    for (const { sources, dest } of copies) {
      for (const path of sources)
        cpSync(join(ROOT, path), join(dir, dest, dest.endsWith('/') ? basename(path) : ''), {
          recursive: true,
        });
    }
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    execFileSync(process.execPath, ['bin/build.js'], { cwd: dir });
    built.set(name, dir);
  }
  const app = mkdtempSync(join(tmpdir(), 'imgpipe-image-'));
  t.after(() => rmSync(app, { recursive: true, force: true }));
  for (const { from, sources, dest } of image) {
    for (const path of sources) {
      const target = join(app, dest, dest.endsWith('/') ? basename(path) : '');
      if (from !== undefined && path === '/app/node_modules') {
        productionNodeModules(app);
        continue;
      }
      const source =
        from === undefined ? join(ROOT, path) : join(built.get(from) as string, relative('/app', path));
      cpSync(source, target, { recursive: true });
    }
  }
  return app;
}

test("the Dockerfile's image: no compiler and no sources, yet it starts, serves /docs and its guides and processes an image", async (t) => {
  const app = dockerImage(t);
  for (const compiler of ['tsx', 'esbuild', 'typescript']) {
    assert.equal(existsSync(join(app, 'node_modules', compiler)), false, `${compiler} is not in the image`);
  }
  assert.equal(existsSync(join(app, 'src', 'cli', 'index.ts')), false, 'no TypeScript sources');
  const launched = await launch(t, "the Dockerfile's CMD", {}, app);
  t.after(() => launched.child.kill('SIGKILL'));
  for (const page of ['/docs', '/docs/delivery', '/docs/readme', '/openapi.json', '/', '/pricing']) {
    assert.equal((await fetch(`${launched.url}${page}`)).status, 200, page);
  }
  const metrics = await (await fetch(`${launched.url}/metrics`)).text();
  assert.match(metrics, /imgpipe_build_info\{[^}]*runtime="bundle"/, 'the image runs its prebuilt bundle');
  const jpeg = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#468' } })
    .jpeg()
    .toBuffer();
  const form = imageForm(jpeg, { format: 'webp' });
  const res = await fetch(`${launched.url}/v1/image`, {
    method: 'POST',
    headers: { ...form.headers, authorization: `Bearer ${DEV_KEY}` },
    body: form.payload,
  });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('content-type'), 'image/webp');
});
