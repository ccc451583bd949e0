// Hostile images through POST /v1/image: the whole corpus, seeded mutations of valid files, polyglots and
// generated TIFF/WebP bombs. Only 200, 413 or 422 (never a 500 or a crash), and usage equals the 200s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import sharp from 'sharp';
import { usageMonth } from '../../src/accounts/quota.ts';
import { sniffImageFormat } from '../../src/pipeline/formats.ts';
import { findAccountByEmail } from '../../src/store/accounts.ts';
import { findUsage } from '../../src/store/usage.ts';
import { documentedAnswer, fromInject, injectBounded } from '../helpers/answers.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { animatedImage, gifFrameBomb } from '../helpers/animations.ts';
import { tiffBomb, webpExtendedBomb, webpLosslessBomb } from '../helpers/bombs.ts';
import { CORPUS_DIR, corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';

const SEED = 90_210;
const IMAGE_ANSWERS = ['ok', 'image_too_large', 'unprocessable_image', 'process_timeout'];
const OPERATION_SETS = [
  {},
  { resize: { w: 64, h: 64, fit: 'cover' }, format: 'webp', quality: 50 },
  { resize: { w: 48 }, format: 'avif', strip: false },
];

/** Posts `bytes` as the image; checks the answer is 200/413/422 and, for a 200, that the body is an image. */
async function send(app: TestApp, bytes: Buffer, ops: unknown, what: string, filename = 'upload.bin') {
  const form = imageForm(bytes, ops, filename);
  const res = await injectBounded(app.app, {
    method: 'POST',
    url: '/v1/image',
    headers: { ...form.headers, ...app.auth },
    payload: form.payload,
  });
  const code = documentedAnswer(fromInject(res), what, IMAGE_ANSWERS);
  if (code === 'ok') assert.ok(sniffImageFormat(res.rawPayload), `${what}: the 200 body is not an image`);
  return code;
}

/** Counts answers per code and checks usage equals the 200s at the end. */
async function run(
  t: Parameters<typeof buildTestApp>[0],
  body: (s: (b: Buffer, o: unknown, w: string, f?: string) => Promise<string>) => Promise<void>,
) {
  const app = await buildTestApp(t, { QUOTA_FREE: '100000' });
  let ok = 0;
  let total = 0;
  await body(async (bytes, ops, what, filename) => {
    const code = await send(app, bytes, ops, what, filename);
    total++;
    if (code === 'ok') ok++;
    return code;
  });
  const account = await findAccountByEmail(app.ctx.store.db, 'user@example.com');
  assert.ok(account);
  assert.equal(await findUsage(app.ctx.store.db, account.id, usageMonth(new Date())), ok, 'usage = 200s');
  assert.equal(app.ctx.jobs.inFlight, 0, 'no processing slot leaked');
  return { ok, total };
}

// The images only: not the README nor the scripts that make the synthetic ones.
const corpusFiles = readdirSync(CORPUS_DIR).filter((f) => f !== 'README.md' && !f.endsWith('.mjs'));

// HEIC files decode in WebAssembly in a child (seconds each on a loaded machine): more than the default 120 s.
test(
  'every corpus file with several operation sets: 200, 413 or 422; quota refunded on every failure',
  { timeout: 600_000 },
  async (t) => {
    assert.ok(corpusFiles.length >= 40, `corpus has ${corpusFiles.length} files`);
    const { ok } = await run(t, async (send) => {
      for (const name of corpusFiles) {
        for (const ops of OPERATION_SETS)
          await send(corpus(name), ops, `${name} ${JSON.stringify(ops)}`, name);
      }
    });
    assert.ok(ok > 0 && ok < corpusFiles.length * OPERATION_SETS.length, `${ok} answered 200`);
  },
);

test('image_too_large: corpus bombs (PNG, JPEG, GIF, AVIF) and generated TIFF and WebP bombs are 413', async (t) => {
  const bombs: [string, Buffer][] = [
    ...corpusFiles
      .filter((f) => /bomb|17000x17000|8001x5000/.test(f))
      .map((f): [string, Buffer] => [f, corpus(f)]),
    ['tiff 65536x65536', tiffBomb(65_536, 65_536)],
    ['tiff 100000x1000', tiffBomb(100_000, 1000)],
    ['tiff 40000001x1', tiffBomb(40_000_001, 1)],
    ['webp lossless 16383x16383', webpLosslessBomb(16_383, 16_383)],
    ['webp lossless 16383x2442', webpLosslessBomb(16_383, 2442)],
    ['webp VP8X 16383x16383', webpExtendedBomb(16_383, 16_383)],
  ];
  assert.ok(bombs.length >= 10);
  await run(t, async (send) => {
    for (const [name, bytes] of bombs) {
      assert.ok(bytes.length < 20_000, `${name} is small`);
      assert.equal(await send(bytes, {}, name), 'image_too_large', name);
    }
  });
});

test('the generated bomb headers are read as declared (so the 413 comes from the pixel cap)', async () => {
  const tiff = await sharp(tiffBomb(65_536, 65_536), { limitInputPixels: false }).metadata();
  assert.deepEqual([tiff.format, tiff.width, tiff.height], ['tiff', 65_536, 65_536]);
  const webp = await sharp(webpLosslessBomb(16_383, 16_383), { limitInputPixels: false }).metadata();
  assert.deepEqual([webp.format, webp.width, webp.height], ['webp', 16_383, 16_383]);
  const vp8x = await sharp(webpExtendedBomb(16_383, 16_383), { limitInputPixels: false }).metadata();
  assert.deepEqual([vp8x.format, vp8x.width, vp8x.height], ['webp', 16_383, 16_383]);
});

const MUTATION_SOURCES = [
  'hopper.jpg',
  'hopper.webp',
  'tbgn2c16.png',
  'bggn4a16.png',
  'synthetic-exif-gps-orient6-p3.jpg',
  'kodim03_yuv420_8bpc.avif',
  'rotating-squares.gif',
  'heic-exif-orient6-p3.heic',
];

test('bit flips of valid files (seeded): 200, 413 or 422, usage equals the 200s', async (t) => {
  const { ok, total } = await run(t, async (send) => {
    const flips = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })), {
      minLength: 1,
      maxLength: 6,
    });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...MUTATION_SOURCES), flips, async (name, changes) => {
        const bytes = Buffer.from(corpus(name));
        // Flips fall in the first 2 KiB half of the time: that is where the headers live.
        for (const [at, bit] of changes) {
          const pos = at % 2 === 0 ? at % Math.min(2048, bytes.length) : at % bytes.length;
          bytes[pos] = (bytes[pos] ?? 0) ^ (1 << bit);
        }
        await send(bytes, { resize: { w: 32 } }, `${name} flips ${JSON.stringify(changes)}`);
      }),
      { numRuns: 60, seed: SEED },
    );
  });
  assert.ok(ok > 0 && ok < total, `${ok} of ${total} flipped files answered 200: both sides must be reached`);
});

test('truncations of valid files at random offsets (seeded): 413 or 422 for a cut image, usage equals the 200s', async (t) => {
  await run(t, async (send) => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...MUTATION_SOURCES),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (name, at) => {
          const full = corpus(name);
          const cut = Math.max(1, Math.floor(full.length * at));
          const what = `${name} cut at ${cut}/${full.length}`;
          const code = await send(full.subarray(0, cut), { resize: { w: 32 } }, what);
          // Only a cut inside the end-of-file trailer (PNG IEND is 12 bytes) leaves every pixel there.
          if (full.length - cut > 12) assert.notEqual(code, 'ok', `${what}: a partly decoded 200`);
        },
      ),
      { numRuns: 80, seed: SEED },
    );
  });
});

/** A GIF whose header is also the start of a JS comment: `GIF89a/*…*\/=alert(1)`. Width reads as 0x2a2f. */
function gifJsPolyglot(): Buffer {
  const gif = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
  const polyglot = Buffer.from(gif);
  polyglot.write('/*', 6, 'latin1');
  polyglot.writeUInt16LE(1, 8);
  return Buffer.concat([polyglot, Buffer.from('*/=1;alert(document.domain);//', 'latin1')]);
}

test('zero-byte, wrong-extension and polyglot files: documented answers, no script ever returned as-is', async (t) => {
  const app = await buildTestApp(t, { QUOTA_FREE: '100000' });
  const empty = imageForm(Buffer.alloc(0), {});
  const res = await injectBounded(app.app, {
    method: 'POST',
    url: '/v1/image',
    headers: { ...empty.headers, ...app.auth },
    payload: empty.payload,
  });
  assert.equal(documentedAnswer(fromInject(res), 'zero bytes'), 'no_image', 'an empty file is no image');

  const html = Buffer.from('<html><script>alert(1)</script></html>');
  await run(t, async (send) => {
    assert.equal(await send(corpus('hopper.jpg'), {}, 'jpeg named .png', 'photo.png'), 'ok');
    assert.equal(await send(corpus('hopper.webp'), {}, 'webp named .gif', 'anim.gif'), 'ok');
    assert.equal(await send(corpus('abc.png'), {}, 'png named .svg', 'vector.svg'), 'ok');
    assert.equal(
      await send(corpus('synthetic-not-an-image.jpg'), {}, 'html named .jpg'),
      'unprocessable_image',
    );
    const polyglots: [string, Buffer][] = [
      ['jpeg + html', Buffer.concat([corpus('hopper.jpg'), html])],
      ['png + zip', Buffer.concat([corpus('tbgn2c16.png'), Buffer.from('PK\u0003\u0004'), html])],
      ['gif/js', gifJsPolyglot()],
      ['html + jpeg', Buffer.concat([html, corpus('hopper.jpg')])],
      [
        'png magic + svg',
        Buffer.concat([corpus('tbgn2c16.png').subarray(0, 8), corpus('synthetic-svg-external-refs.svg')]),
      ],
      ['tiff 4x4 (control: a valid tiny TIFF)', tiffBomb(4, 4)],
    ];
    for (const [name, bytes] of polyglots) {
      const code = await send(bytes, { format: 'png' }, name);
      if (name.startsWith('html')) assert.equal(code, 'unprocessable_image', name);
      if (name.startsWith('tiff')) assert.equal(code, 'ok', name);
    }
  });
});

/** The newer paths: the raw body, POST /v1/image/info, resize.position and animated WebP output. */
async function sendRaw(
  app: TestApp,
  path: string,
  bytes: Buffer,
  ops: unknown,
  what: string,
): Promise<string> {
  const res = await injectBounded(app.app, {
    method: 'POST',
    url: `${path}?operations=${encodeURIComponent(JSON.stringify(ops))}`,
    headers: { 'content-type': 'application/octet-stream', ...app.auth },
    payload: bytes,
  });
  if (path === '/v1/image/info' && res.statusCode === 200) {
    const info = res.json() as { format?: unknown; output?: { frames?: unknown } };
    assert.ok(
      typeof info.format === 'string' && typeof info.output?.frames === 'number',
      `${what}: ${res.body}`,
    );
    return 'ok';
  }
  const code = documentedAnswer(fromInject(res), what, IMAGE_ANSWERS);
  if (code === 'ok') assert.ok(sniffImageFormat(res.rawPayload), `${what}: the 200 body is not an image`);
  return code;
}

test('raw body, /v1/image/info, position and animated WebP on mutants (seeded): 200, 413 or 422, usage equals the 200s', async (t) => {
  const app = await buildTestApp(t, { QUOTA_FREE: '100000' });
  const animated = await animatedImage('gif', { width: 64, height: 48, frames: 5, delay: 40, loop: 0 });
  const animatedWebp = await animatedImage('webp', { width: 64, height: 48, frames: 5, delay: 40, loop: 0 });
  const sources: [string, Buffer][] = [
    ...MUTATION_SOURCES.map((name): [string, Buffer] => [name, corpus(name)]),
    ['animated.gif', animated],
    ['animated.webp', animatedWebp],
    ['frame bomb', gifFrameBomb(400, 64)],
  ];
  const opsSets = [
    { resize: { w: 40, h: 40, fit: 'cover', position: { x: 0.9, y: 0.1 } }, format: 'webp' },
    { resize: { w: 40, h: 40, fit: 'cover', position: 'attention' }, format: 'webp' },
    { resize: { w: 40, h: 30, fit: 'contain', position: { x: 0, y: 1 } }, format: 'png' },
  ];
  let ok = 0;
  let total = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...sources),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })), { minLength: 0, maxLength: 4 }),
      fc.constantFrom(...opsSets),
      async ([name, source], changes, ops) => {
        const bytes = Buffer.from(source);
        for (const [at, bit] of changes) {
          const pos = at % 2 === 0 ? at % Math.min(1024, bytes.length) : at % bytes.length;
          bytes[pos] = (bytes[pos] ?? 0) ^ (1 << bit);
        }
        const what = `${name} flips ${JSON.stringify(changes)} ${JSON.stringify(ops)}`;
        await sendRaw(app, '/v1/image/info', bytes, ops, `info: ${what}`);
        if ((await sendRaw(app, '/v1/image', bytes, ops, what)) === 'ok') ok++;
        total++;
      },
    ),
    { numRuns: 50, seed: SEED },
  );
  const account = await findAccountByEmail(app.ctx.store.db, 'user@example.com');
  assert.ok(account);
  assert.equal(await findUsage(app.ctx.store.db, account.id, usageMonth(new Date())), ok, 'usage = 200s');
  assert.equal(app.ctx.jobs.inFlight, 0, 'no processing slot leaked');
  assert.ok(ok > 0 && ok < total, `${ok} of ${total} answered 200: both sides must be reached`);
});

test('every corpus file through /v1/image/info: 200 with the facts, or 413/422 as POST /v1/image answers', async (t) => {
  const app = await buildTestApp(t, { INFO_RATE_LIMIT: '1000' });
  let described = 0;
  for (const name of corpusFiles) {
    for (const ops of [undefined, { resize: { w: 64 } }]) {
      const query = ops === undefined ? '' : `?operations=${encodeURIComponent(JSON.stringify(ops))}`;
      const res = await injectBounded(app.app, {
        method: 'POST',
        url: `/v1/image/info${query}`,
        headers: { 'content-type': 'application/octet-stream', ...app.auth },
        payload: corpus(name),
      });
      const what = `info ${name} ${JSON.stringify(ops)}`;
      if (res.statusCode === 200) {
        const info = res.json() as { width?: unknown; frames?: unknown; output?: unknown };
        assert.ok(typeof info.width === 'number' && typeof info.frames === 'number', what);
        assert.equal(info.output !== undefined, ops !== undefined, what);
        described++;
      } else {
        documentedAnswer(fromInject(res), what, ['image_too_large', 'unprocessable_image']);
      }
    }
  }
  assert.ok(described > corpusFiles.length, `${described} answers described an image`);
});
