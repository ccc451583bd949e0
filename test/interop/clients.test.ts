// Real HTTP clients against a real server: curl, Python requests, Node fetch, undici with a streamed body and
// Chromium's FormData. Each sends the upload form and the url form and must get the image it asked for.
// A client that is not installed makes its cases skip with a message (.ci/run installs them from Debian).
// Each client call has its own deadline (CLIENT_TIMEOUT_MS): a client that hangs fails its test under its own name
// within seconds, rather than holding the file until the runner's backstop cancels it with no name at all.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { request as undiciRequest } from 'undici';
import { chromium } from 'playwright-core';
import { startTestServer } from '../helpers/app.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

const CLIENT_TIMEOUT_MS = 30_000;
const execFileAsync = promisify(execFile);
/** Runs a client program; past CLIENT_TIMEOUT_MS it is killed and the call fails naming the command. */
const run = (command: string, args: string[]) =>
  execFileAsync(command, args, { timeout: CLIENT_TIMEOUT_MS, killSignal: 'SIGKILL' });
const OPERATIONS = { resize: { w: 50 }, format: 'webp' };
const OPERATIONS_TEXT = JSON.stringify(OPERATIONS);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether `command args` runs and succeeds; one that does not finish within CLIENT_TIMEOUT_MS counts as missing. */
function installed(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: CLIENT_TIMEOUT_MS, killSignal: 'SIGKILL' });
    return true;
  } catch {
    return false;
  }
}

/** Debian's python3 (with python3-requests) first, then whatever python3 is on PATH. */
const PYTHON = ['/usr/bin/python3', 'python3'].find((p) => installed(p, ['-c', 'import requests']));
const HAS_CURL = installed('curl', ['--version']);

async function assertAskedImage(bytes: Buffer, client: string) {
  const meta = await sharp(bytes).metadata();
  assert.equal(meta.format, 'webp', client);
  assert.equal(meta.width, 50, client);
  assert.equal(meta.height, 25, client);
}

interface Fixture {
  url: string;
  key: string;
  dir: string;
  photo: string;
  imageUrl: string;
}

async function fixture(t: TestContext): Promise<Fixture> {
  const server = await startTestServer(t, { FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const jpeg = await sharp({ create: { width: 200, height: 100, channels: 3, background: '#2a6' } })
    .jpeg()
    .toBuffer();
  const origin = await startOrigin(t, (_req, res) => sendImage(res, jpeg));
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-interop-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const photo = join(dir, 'photo.jpg');
  writeFileSync(photo, jpeg);
  writeFileSync(join(dir, 'ops.json'), OPERATIONS_TEXT);
  return {
    url: server.url,
    key: server.key,
    dir,
    photo,
    imageUrl: `http://127.0.0.1:${origin.port}/photo.jpg`,
  };
}

async function curl(f: Fixture, args: string[], query = ''): Promise<void> {
  const out = join(f.dir, 'curl.out');
  const { stdout } = await run('curl', [
    '-sS',
    '-o',
    out,
    '-w',
    '%{http_code}',
    '-H',
    `Authorization: Bearer ${f.key}`,
    ...args,
    `${f.url}/v1/image${query}`,
  ]);
  assert.equal(stdout, '200', readFileSync(out, 'utf8').slice(0, 300));
  await assertAskedImage(readFileSync(out), `curl ${args.join(' ')}`);
}

test('interop: curl -F (plain, ;type=application/json, @file.json) and -d JSON with charset', async (t) => {
  if (!HAS_CURL) return t.skip('curl is not installed (Debian package "curl")');
  const f = await fixture(t);
  await curl(f, ['-F', `image=@${f.photo}`, '-F', `operations=${OPERATIONS_TEXT}`]);
  await curl(f, ['-F', `image=@${f.photo}`, '-F', `operations=${OPERATIONS_TEXT};type=application/json`]);
  await curl(f, ['-F', `image=@${f.photo}`, '-F', `operations=@${join(f.dir, 'ops.json')}`]);
  await curl(f, ['-F', `image=@${f.photo}`, '-F', 'url=', '-F', `operations=${OPERATIONS_TEXT}`]);
  await curl(f, ['-F', `url=${f.imageUrl}`, '-F', `operations=${OPERATIONS_TEXT}`]);
  await curl(f, [
    '-H',
    'Content-Type: application/json; charset=utf-8',
    '-d',
    JSON.stringify({ url: f.imageUrl, operations: OPERATIONS }),
  ]);
});

test('interop: curl --data-binary @photo.jpg with Content-Type image/jpeg and ?operations=', async (t) => {
  if (!HAS_CURL) return t.skip('curl is not installed (Debian package "curl")');
  const f = await fixture(t);
  const query = `?operations=${encodeURIComponent(OPERATIONS_TEXT)}`;
  await curl(f, ['-H', 'Content-Type: image/jpeg', '--data-binary', `@${f.photo}`], query);
  await curl(f, ['-H', 'Content-Type: application/octet-stream', '-T', f.photo, '-X', 'POST'], query);
});

const PYTHON_CLIENT = `
import json, sys, requests
base, key, photo, image_url, mode, out = sys.argv[1:7]
ops = json.dumps({"resize": {"w": 50}, "format": "webp"})
auth = {"Authorization": "Bearer " + key}
if mode == "files-data":
    r = requests.post(base + "/v1/image", headers=auth, files={"image": open(photo, "rb")}, data={"operations": ops})
elif mode == "typed-part":
    r = requests.post(base + "/v1/image", headers=auth,
        files={"image": ("photo.jpg", open(photo, "rb"), "image/jpeg"), "operations": (None, ops, "application/json")})
elif mode == "raw-body":
    r = requests.post(base + "/v1/image", params={"operations": ops},
        headers={**auth, "Content-Type": "image/jpeg"}, data=open(photo, "rb"))
elif mode == "url-data":
    r = requests.post(base + "/v1/image", headers=auth, files={"url": (None, image_url)}, data={"operations": ops})
else:
    r = requests.post(base + "/v1/image", headers=auth, json={"url": image_url, "operations": json.loads(ops)})
open(out, "wb").write(r.content)
print(r.status_code)
`;

test('interop: Python requests (files= + data=, a typed application/json part, a raw body with params=, json=)', async (t) => {
  const python = PYTHON;
  if (python === undefined)
    return t.skip('Python requests is not installed (Debian package "python3-requests")');
  const f = await fixture(t);
  const script = join(f.dir, 'client.py');
  writeFileSync(script, PYTHON_CLIENT);
  for (const mode of ['files-data', 'typed-part', 'raw-body', 'url-data', 'json']) {
    const out = join(f.dir, `${mode}.out`);
    const { stdout }: { stdout: string } = await run(python, [
      script,
      f.url,
      f.key,
      f.photo,
      f.imageUrl,
      mode,
      out,
    ]);
    assert.equal(stdout.trim(), '200', `${mode}: ${readFileSync(out, 'utf8').slice(0, 300)}`);
    await assertAskedImage(readFileSync(out), `requests ${mode}`);
  }
});

test('interop: Node fetch with FormData (operations as a string and as an application/json Blob) and a JSON body', async (t) => {
  const f = await fixture(t);
  const auth = { authorization: `Bearer ${f.key}` };
  const photo = new Blob([new Uint8Array(readFileSync(f.photo))], { type: 'image/jpeg' });
  const forms = [OPERATIONS_TEXT, new Blob([OPERATIONS_TEXT], { type: 'application/json' })].map((ops) => {
    const form = new FormData();
    form.append('image', photo, 'photo.jpg');
    form.append('operations', ops);
    return form;
  });
  for (const body of forms) {
    const res = await fetch(`${f.url}/v1/image`, {
      method: 'POST',
      headers: auth,
      body,
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await assertAskedImage(Buffer.from(await res.arrayBuffer()), 'fetch FormData');
  }
  const res = await fetch(`${f.url}/v1/image`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url: f.imageUrl, operations: OPERATIONS }),
    signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  });
  assert.equal(res.status, 200);
  await assertAskedImage(Buffer.from(await res.arrayBuffer()), 'fetch url form');
});

/** A body streamed in small chunks, with no Content-Length (chunked transfer encoding). */
function streamed(bytes: Buffer): Readable {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 1024) chunks.push(bytes.subarray(i, i + 1024));
  return Readable.from(chunks);
}

test('interop: undici with a streamed body (multipart upload and JSON url form)', async (t) => {
  const f = await fixture(t);
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(readFileSync(f.photo))]), 'photo.jpg');
  form.append('operations', OPERATIONS_TEXT);
  const encoded = new Response(form);
  const bodies = [
    {
      type: encoded.headers.get('content-type') ?? '',
      bytes: Buffer.from(await encoded.arrayBuffer()),
    },
    {
      type: 'application/json',
      bytes: Buffer.from(JSON.stringify({ url: f.imageUrl, operations: OPERATIONS })),
    },
  ];
  for (const { type, bytes } of bodies) {
    const res = await undiciRequest(`${f.url}/v1/image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${f.key}`, 'content-type': type },
      body: streamed(bytes),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    assert.equal(res.statusCode, 200, body.toString('utf8').slice(0, 300));
    await assertAskedImage(body, `undici ${type}`);
  }
});

test("interop: Chromium's FormData and fetch through playwright-core", async (t) => {
  if (!existsSync(CHROMIUM)) {
    return t.skip(
      `Chromium not found at ${CHROMIUM} (install the Debian package "chromium" or set CHROMIUM_PATH)`,
    );
  }
  const f = await fixture(t);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    timeout: CLIENT_TIMEOUT_MS,
  });
  t.after(() => browser.close());
  const page = await browser.newPage();
  page.setDefaultTimeout(CLIENT_TIMEOUT_MS);
  await page.goto(`${f.url}/pricing`);
  const answers = await page.evaluate(
    async ({ key, photo, ops, imageUrl, timeoutMs }) => {
      const bytes = Uint8Array.from(atob(photo), (c) => c.charCodeAt(0));
      const auth = { Authorization: `Bearer ${key}` };
      const upload = new FormData();
      upload.append('image', new Blob([bytes], { type: 'image/jpeg' }), 'photo.jpg');
      upload.append('operations', ops);
      const byUrl = new FormData();
      byUrl.append('url', imageUrl);
      byUrl.append('operations', new Blob([ops], { type: 'application/json' }));
      const out = [];
      for (const body of [upload, byUrl]) {
        const res = await fetch('/v1/image', {
          method: 'POST',
          headers: auth,
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const buf = new Uint8Array(await res.arrayBuffer());
        let binary = '';
        for (const b of buf) binary += String.fromCharCode(b);
        out.push({ status: res.status, body: btoa(binary) });
      }
      return out;
    },
    {
      key: f.key,
      photo: readFileSync(f.photo).toString('base64'),
      ops: OPERATIONS_TEXT,
      imageUrl: f.imageUrl,
      timeoutMs: CLIENT_TIMEOUT_MS,
    },
  );
  for (const [i, answer] of answers.entries()) {
    const body = Buffer.from(answer.body, 'base64');
    assert.equal(answer.status, 200, body.toString('utf8').slice(0, 300));
    await assertAskedImage(body, `chromium ${i === 0 ? 'upload' : 'url'}`);
  }
});

const PYTHON_INFO = `
import json, sys, requests
base, key, photo, image_url = sys.argv[1:5]
ops = json.dumps({"resize": {"w": 50}, "format": "webp"})
auth = {"Authorization": "Bearer " + key}
for r in (
    requests.post(base + "/v1/image/info", headers=auth, files={"image": open(photo, "rb")}, data={"operations": ops}),
    requests.post(base + "/v1/image/info", headers=auth, json={"url": image_url, "operations": json.loads(ops)}),
):
    print(r.status_code, r.text)
`;

/** What the probe says of the fixture's 200×100 JPEG with OPERATIONS. */
function assertInfo(status: string, text: string, client: string) {
  assert.equal(status, '200', `${client}: ${text.slice(0, 300)}`);
  const info = JSON.parse(text) as { format: string; width: number; height: number; output: unknown };
  assert.deepEqual(
    { format: info.format, width: info.width, height: info.height, output: info.output },
    { format: 'jpeg', width: 200, height: 100, output: { format: 'webp', width: 50, height: 25, frames: 1 } },
    client,
  );
}

test('interop: POST /v1/image/info from curl (-F, --data-binary) and Python requests (files=, json=)', async (t) => {
  if (!HAS_CURL) return t.skip('curl is not installed (Debian package "curl")');
  const f = await fixture(t);
  const auth = ['-H', `Authorization: Bearer ${f.key}`];
  const query = `?operations=${encodeURIComponent(OPERATIONS_TEXT)}`;
  const answers = [
    ['-F', `image=@${f.photo}`, '-F', `operations=${OPERATIONS_TEXT}`, `${f.url}/v1/image/info`],
    ['-H', 'Content-Type: image/jpeg', '--data-binary', `@${f.photo}`, `${f.url}/v1/image/info${query}`],
  ];
  for (const args of answers) {
    const { stdout } = await run('curl', ['-sS', '-w', '\n%{http_code}', ...auth, ...args]);
    const [text = '', status = ''] = stdout.split(/\n(?=\d{3}$)/);
    assertInfo(status, text, `curl ${args.slice(0, 2).join(' ')}`);
  }
  if (PYTHON === undefined) return t.diagnostic('Python requests is not installed: its half is skipped');
  const script = join(f.dir, 'info.py');
  writeFileSync(script, PYTHON_INFO);
  const { stdout } = await run(PYTHON, [script, f.url, f.key, f.photo, f.imageUrl]);
  for (const line of stdout.trim().split('\n')) {
    const [status = '', ...rest] = line.split(' ');
    assertInfo(status, rest.join(' '), 'requests');
  }
});
