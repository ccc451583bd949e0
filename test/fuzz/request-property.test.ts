// Property tests of request parsing on POST /v1/image: content types, boundaries, truncated and mutated multipart,
// part counts, oversized fields and headers. Every answer is a documented 4xx JSON error or a 200, never a hang.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { documentedAnswer, fromInject, injectBounded } from '../helpers/answers.ts';
import { buildTestApp, startTestServer, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { rawExchange } from '../helpers/http-client.ts';
import { imageForm, multipartBody, type Part } from '../helpers/multipart.ts';

const SEED = 4_242;
const printable = fc.stringMatching(/^[\x20-\x7e]{0,80}$/);

function post(app: TestApp, payload: Buffer | string, headers: Record<string, string>) {
  return injectBounded(app.app, {
    method: 'POST',
    url: '/v1/image',
    headers: { ...headers, ...app.auth },
    payload,
  });
}

async function answerOf(
  app: TestApp,
  payload: Buffer | string,
  headers: Record<string, string>,
  what: string,
) {
  return documentedAnswer(fromInject(await post(app, payload, headers)), what);
}

const image = () => corpus('hopper.jpg');
const imagePart = (extra: Partial<Part> = {}): Part => ({
  name: 'image',
  value: image(),
  filename: 'h.jpg',
  contentType: 'image/jpeg',
  ...extra,
});

test('any content type with any body: a documented answer, never a 500', async (t) => {
  const app = await buildTestApp(t);
  const valid = imageForm(image());
  const contentType = fc.oneof(
    fc.constantFrom(
      'text/plain',
      'application/xml',
      'image/jpeg',
      'application/octet-stream',
      'application/x-www-form-urlencoded',
      'multipart/mixed; boundary=x',
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/form-data; boundary="unterminated',
      `multipart/form-data; boundary=${'b'.repeat(200)}`,
      'application/json',
      'APPLICATION/JSON; charset=latin1',
      'application/json; charset=utf-16',
      'application/vnd.api+json',
      ';;;',
      'a/b/c',
      '*/*',
    ),
    printable,
  );
  const body = fc.oneof(
    fc.uint8Array({ maxLength: 2048 }).map((a) => Buffer.from(a)),
    fc.json(),
    fc.constant(valid.payload),
    fc.constant('{"url":"http://127.0.0.1:9/a.png","operations":{}}'),
  );
  await fc.assert(
    fc.asyncProperty(contentType, body, async (type, payload) => {
      await answerOf(app, payload, { 'content-type': type }, `content-type ${JSON.stringify(type)}`);
    }),
    { numRuns: 120, seed: SEED },
  );
});

test('bad_upload: multipart without a boundary, or with one that does not match the body', async (t) => {
  const app = await buildTestApp(t);
  const form = imageForm(image());
  for (const type of [
    'multipart/form-data',
    'multipart/form-data; boundary=',
    'multipart/form-data; boundary=other',
    'multipart/form-data; charset=utf-8',
  ]) {
    const code = await answerOf(app, form.payload, { 'content-type': type }, type);
    assert.ok(['bad_upload', 'no_image'].includes(code), `${type}: ${code}`);
  }
});

test('truncated multipart at any offset: 200 only when every part arrived, else a documented 400', async (t) => {
  const app = await buildTestApp(t, { QUOTA_FREE: '100000' });
  const forms = [
    imageForm(image(), { format: 'png' }),
    multipartBody([{ name: 'operations', value: '{}' }, imagePart()]),
  ];
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(0, 1), fc.double({ min: 0, max: 1, noNaN: true }), async (which, at) => {
      const form = forms[which] ?? forms[0];
      assert.ok(form);
      const cut = Math.floor(form.payload.length * at);
      const code = await answerOf(app, form.payload.subarray(0, cut), form.headers, `cut at ${cut}`);
      assert.ok(['ok', 'bad_upload', 'no_image', 'invalid_operations'].includes(code), `cut ${cut}: ${code}`);
      // Every part is complete only once the image's closing delimiter has arrived.
      const imageEnd = form.payload.indexOf(
        Buffer.from('\r\n--'),
        form.payload.indexOf(image().subarray(0, 64)),
      );
      if (cut <= imageEnd) assert.notEqual(code, 'ok', `cut ${cut} inside the image still answered 200`);
    }),
    { numRuns: 60, seed: SEED },
  );
});

test('random byte flips in a multipart body: a documented answer', async (t) => {
  const app = await buildTestApp(t, { QUOTA_FREE: '100000' });
  const form = imageForm(corpus('bggn4a16.png'), { resize: { w: 16 } });
  const flips = fc.array(
    fc.tuple(fc.nat({ max: form.payload.length - 1 }), fc.integer({ min: 1, max: 255 })),
    {
      minLength: 1,
      maxLength: 8,
    },
  );
  await fc.assert(
    fc.asyncProperty(flips, async (changes) => {
      const payload = Buffer.from(form.payload);
      for (const [at, xor] of changes) payload[at] = (payload[at] ?? 0) ^ xor;
      await answerOf(app, payload, form.headers, `flips ${JSON.stringify(changes)}`);
    }),
    { numRuns: 60, seed: SEED },
  );
});

test('many parts: up to 7 extra fields are ignored, more is 400 bad_upload; a second file is bad_upload', async (t) => {
  const app = await buildTestApp(t, { QUOTA_FREE: '100000' });
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.boolean(), async (extra, imageFirst) => {
      const fields: Part[] = Array.from({ length: extra }, (_, i) => ({ name: `x${i}`, value: 'v' }));
      const ops: Part = { name: 'operations', value: '{}' };
      const parts = imageFirst ? [imagePart(), ops, ...fields] : [ops, ...fields, imagePart()];
      const form = multipartBody(parts);
      const code = await answerOf(app, form.payload, form.headers, `${extra} extra fields`);
      // Limits: 8 fields (operations + 7 others) and 10 parts.
      assert.equal(code, extra <= 7 ? 'ok' : 'bad_upload', `${extra} extra fields`);
    }),
    { numRuns: 25, seed: SEED },
  );
  const files = multipartBody([imagePart(), imagePart(), { name: 'operations', value: '{}' }]);
  assert.equal(await answerOf(app, files.payload, files.headers, 'two files'), 'bad_upload');
  const otherFile = multipartBody([imagePart({ name: 'picture' }), { name: 'operations', value: '{}' }]);
  assert.equal(await answerOf(app, otherFile.payload, otherFile.headers, 'file named picture'), 'bad_upload');
});

test('an image part with no filename (any content type) is the image', async (t) => {
  const app = await buildTestApp(t, { QUOTA_FREE: '100000' });
  for (const contentType of [undefined, 'image/jpeg', 'text/plain', 'application/octet-stream']) {
    const form = multipartBody([
      { name: 'image', value: image(), ...(contentType ? { contentType } : {}) },
      { name: 'operations', value: '{}' },
    ]);
    assert.equal(await answerOf(app, form.payload, form.headers, `no filename, ${contentType}`), 'ok');
  }
});

test('a 10 MB operations field: 400 invalid_operations (multipart) or bad_upload (JSON body)', async (t) => {
  const app = await buildTestApp(t);
  const huge = `{"format":"${'x'.repeat(10 * 1024 * 1024)}"}`;
  const form = imageForm(image(), huge);
  assert.equal(
    await answerOf(app, form.payload, form.headers, '10 MB multipart field'),
    'invalid_operations',
  );
  const json = JSON.stringify({ url: 'http://127.0.0.1:9/a.png', operations: { format: huge } });
  assert.equal(
    await answerOf(app, json, { 'content-type': 'application/json' }, '10 MB JSON body'),
    'bad_upload',
  );
});

test('JSON bodies: duplicate keys, prototype keys, deep nesting and non-objects get documented answers', async (t) => {
  const app = await buildTestApp(t);
  const cases: [string, string][] = [
    [
      '{"url":"a","url":"http://127.0.0.1:9/a.png","operations":{"format":"x","format":"png"}}',
      'not invalid_operations',
    ],
    ['{"operations":{},"operations":{"nope":1},"url":"http://127.0.0.1:9/a.png"}', 'invalid_operations'],
    ['{"__proto__":{"url":"x"},"operations":{}}', 'bad_upload'],
    ['{"constructor":{"prototype":{"url":"x"}},"operations":{}}', 'bad_upload'],
    [
      `{"operations":${'['.repeat(300_000)}${']'.repeat(300_000)},"url":"http://127.0.0.1:9/"}`,
      'invalid_operations',
    ],
    [`${'['.repeat(400_000)}${']'.repeat(400_000)}`, 'bad_upload'],
    ['{"url":12,"operations":{}}', 'bad_url'],
    ['{"url":"","operations":{}}', 'bad_url'],
    ['"just a string"', 'bad_upload'],
    ['1e308', 'bad_upload'],
    ['null', 'no_image'],
  ];
  for (const [body, expected] of cases) {
    const code = await answerOf(app, body, { 'content-type': 'application/json' }, body.slice(0, 60));
    if (expected === 'not invalid_operations') assert.notEqual(code, 'invalid_operations', body);
    else assert.equal(code, expected, body.slice(0, 60));
  }
});

function jsonErrorOf(answer: string): { status: number; code: string } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
  assert.match(answer, /content-type: application\/json/i, answer.slice(0, 300));
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string } };
  return { status, code: body.error.code };
}

test('headers_too_large: headers over the limit get the JSON 431 on a real socket, and the server keeps serving', async (t) => {
  const app = await startTestServer(t);
  for (const size of [17 * 1024, 64 * 1024, 1024 * 1024]) {
    const answer = await rawExchange(
      app.url,
      `POST /v1/image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${app.key}\r\nX-Big: ${'a'.repeat(size)}\r\n\r\n`,
    );
    assert.deepEqual(jsonErrorOf(answer), { status: 431, code: 'headers_too_large' }, `${size} bytes`);
  }
  const garbage = await rawExchange(app.url, 'NOT HTTP AT ALL\r\n\r\n');
  assert.deepEqual(jsonErrorOf(garbage), { status: 400, code: 'invalid_request' });
  const health = await rawExchange(app.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  assert.match(health, /^HTTP\/1\.1 200/);
});
