// POST /v1/image with quality "auto…", format "auto" and max_bytes: the rules a user sees, judged with the
// repository's own SSIMULACRA 2 on the whole output against the oriented input pixels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { QUALITY_LEVELS } from '../../src/pipeline/auto-quality.ts';
import { AUTO_JPEG_QUANT_TABLE } from '../../src/pipeline/output-search.ts';
import { ssimulacra2, type RgbImage } from '../../src/pipeline/ssimulacra2.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { assertImage } from '../helpers/images.ts';
import { imageForm } from '../helpers/multipart.ts';

function post(t: TestApp, image: Buffer, operations: unknown) {
  const body = imageForm(image, operations);
  return t.app.inject({
    method: 'POST',
    url: '/v1/image',
    headers: { ...body.headers, ...t.auth },
    payload: body.payload,
  });
}

async function pixels(data: Buffer): Promise<RgbImage> {
  const { data: raw, info } = await sharp(data)
    .autoOrient()
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: raw, width: info.width, height: info.height, channels: info.channels };
}

async function scoreOf(input: Buffer, output: Buffer): Promise<number> {
  return ssimulacra2(await pixels(input), await pixels(output));
}

function qualityOf(res: LightMyRequestResponse): number {
  const m = /quality=(\d+)/.exec(String(res.headers['x-service-operations']));
  assert.ok(m, `no quality in ${String(res.headers['x-service-operations'])}`);
  return Number(m[1]);
}

function errorMessage(res: LightMyRequestResponse): string {
  assert.equal(res.statusCode, 400, res.body);
  const body = res.json() as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'invalid_operations');
  return body.error.message;
}

const PHOTO = 'Landscape_1.jpg';
const BAND = 3;

for (const format of ['jpeg', 'webp', 'avif'] as const) {
  test(`quality "auto" as ${format}: the output scores within ${BAND} of the level, and the headers name the quality and score`, async (t) => {
    const app = await buildTestApp(t);
    const input = corpus(PHOTO);
    const res = await post(app, input, { format, quality: 'auto' });
    assert.equal(res.statusCode, 200, res.body);
    await assertImage(res.rawPayload, format);
    const score = await scoreOf(input, res.rawPayload);
    assert.ok(
      Math.abs(score - QUALITY_LEVELS.auto) <= BAND,
      `score ${score.toFixed(1)} is not within ${BAND} of ${QUALITY_LEVELS.auto}`,
    );
    assert.match(
      String(res.headers['x-service-operations']),
      new RegExp(`^format=${format},quality=\\d+,strip$`),
    );
    assert.ok(Number(res.headers['x-service-quality-score']) > 0);
  });
}

test('quality "auto:high" chooses a higher encoder quality than "auto:eco" on the same photo', async (t) => {
  const app = await buildTestApp(t);
  const high = await post(app, corpus(PHOTO), { quality: 'auto:high' });
  const eco = await post(app, corpus(PHOTO), { quality: 'auto:eco' });
  assert.ok(qualityOf(high) > qualityOf(eco), `${qualityOf(high)} ≤ ${qualityOf(eco)}`);
  assert.ok(high.rawPayload.length > eco.rawPayload.length);
});

test('quality "auto" on a thumbnail under 120 px takes the level\'s model quality, unmeasured, not the top quality', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(app, corpus(PHOTO), { resize: { w: 100 }, format: 'jpeg', quality: 'auto' });
  assert.equal(res.statusCode, 200, res.body);
  const quality = qualityOf(res);
  assert.ok(quality >= 70 && quality <= 90, `quality ${quality}`);
  assert.equal(res.headers['x-service-quality-score'], undefined, 'no score: the metric cannot judge it');
});

test('the default request still answers quality=80 without the auto headers', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(app, corpus(PHOTO), {});
  assert.equal(res.headers['x-service-operations'], 'format=jpeg,quality=80,strip');
  assert.equal(res.headers['x-service-quality-score'], undefined);
  assert.equal(res.headers['x-service-max-bytes-met'], undefined);
});

/** The JPEG's quantisation tables (its DQT segments): they depend only on the encoder quality and table set. */
function quantTables(jpeg: Buffer): Buffer {
  const tables: Buffer[] = [];
  for (let at = 2; at + 4 <= jpeg.length && jpeg[at] === 0xff;) {
    const marker = jpeg[at + 1]!;
    const length = jpeg.readUInt16BE(at + 2);
    if (marker === 0xdb) tables.push(jpeg.subarray(at, at + 2 + length));
    if (marker === 0xda) break;
    at += 2 + length;
  }
  return Buffer.concat(tables);
}

test('quality "auto" JPEG uses the quantisation table AUTO_JPEG_QUANT_TABLE names; a fixed quality keeps the default tables', async (t) => {
  const app = await buildTestApp(t);
  const tablesAt = async (quality: number, table?: number) =>
    quantTables(
      await sharp(corpus(PHOTO))
        .jpeg(table === undefined ? { quality } : { quality, quantisationTable: table })
        .toBuffer(),
    );
  const auto = await post(app, corpus(PHOTO), { format: 'jpeg', quality: 'auto' });
  const chosen = qualityOf(auto);
  assert.ok(
    quantTables(auto.rawPayload).equals(await tablesAt(chosen, AUTO_JPEG_QUANT_TABLE)),
    `auto: table ${AUTO_JPEG_QUANT_TABLE}`,
  );
  const fixed = await post(app, corpus(PHOTO), { format: 'jpeg', quality: chosen });
  assert.ok(quantTables(fixed.rawPayload).equals(await tablesAt(chosen)), 'fixed: the default tables');
  assert.ok(
    !(await tablesAt(chosen, AUTO_JPEG_QUANT_TABLE)).equals(await tablesAt(chosen)),
    'the two table sets differ',
  );
});

test('max_bytes: the output fits a cap below the default size, by a lower quality', async (t) => {
  const app = await buildTestApp(t);
  const plain = await post(app, corpus(PHOTO), {});
  const cap = Math.floor(plain.rawPayload.length * 0.7);
  const res = await post(app, corpus(PHOTO), { max_bytes: cap });
  assert.equal(res.statusCode, 200);
  assert.ok(res.rawPayload.length <= cap, `${res.rawPayload.length} > ${cap}`);
  assert.equal(res.headers['x-service-max-bytes-met'], 'true');
  assert.ok(qualityOf(res) < 80);
});

test('max_bytes: a cap no quality can reach answers the smallest output made and says it was not met', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(app, corpus(PHOTO), { max_bytes: 1000 });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-service-max-bytes-met'], 'false');
  assert.equal(qualityOf(res), 30);
  const atFloor = await post(app, corpus(PHOTO), { quality: 30 });
  assert.equal(res.rawPayload.length, atFloor.rawPayload.length);
});

test('max_bytes "input": re-encoding never answers more bytes than were sent', async (t) => {
  const app = await buildTestApp(t);
  // hopper.jpg is a small, already well-compressed JPEG: quality 95 would grow it.
  const input = corpus('hopper.jpg');
  const grown = await post(app, input, { quality: 95 });
  assert.ok(grown.rawPayload.length > input.length, 'the fixture no longer grows at quality 95');
  const res = await post(app, input, { quality: 95, max_bytes: 'input' });
  assert.ok(res.rawPayload.length <= input.length, `${res.rawPayload.length} > ${input.length}`);
  assert.equal(res.headers['x-service-max-bytes-met'], 'true');
});

test('format "auto" answers the smallest of JPEG, WebP and AVIF at the quality asked', async (t) => {
  const app = await buildTestApp(t);
  const sizes = new Map<string, number>();
  for (const format of ['jpeg', 'webp', 'avif']) {
    const res = await post(app, corpus(PHOTO), { format, quality: 60 });
    sizes.set(format, res.rawPayload.length);
  }
  const res = await post(app, corpus(PHOTO), { format: 'auto', quality: 60 });
  assert.equal(res.statusCode, 200);
  const smallest = [...sizes.entries()].reduce((a, b) => (b[1] < a[1] ? b : a));
  assert.equal(res.headers['x-service-output-format'], smallest[0]);
  assert.equal(res.rawPayload.length, smallest[1]);
  assert.equal(res.headers['x-service-operations'], `format=${smallest[0]},quality=60,strip`);
});

test('format "auto" with formats tries only the formats listed', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(app, corpus(PHOTO), { format: 'auto', formats: ['jpeg', 'png'] });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-service-output-format'], 'jpeg');
});

test('format as an array stays 400 invalid_operations naming the formats allowed', async (t) => {
  const app = await buildTestApp(t);
  const message = errorMessage(await post(app, corpus(PHOTO), { format: ['webp', 'avif'] }));
  assert.match(message, /operations\.format must be one of jpeg, png, webp, avif, auto/);
});

test('an unknown auto level is 400 naming the levels allowed', async (t) => {
  const app = await buildTestApp(t);
  const message = errorMessage(await post(app, corpus(PHOTO), { quality: 'auto:best' }));
  assert.match(message, /operations\.quality must be an integer from 1 to 100, or "auto", "auto:high"/);
});

test('formats without format "auto" is 400 saying what it needs', async (t) => {
  const app = await buildTestApp(t);
  const message = errorMessage(await post(app, corpus(PHOTO), { format: 'webp', formats: ['webp'] }));
  assert.match(message, /operations\.formats needs "format": "auto"/);
});

test('formats naming an unknown format is 400 naming the formats allowed', async (t) => {
  const app = await buildTestApp(t);
  const message = errorMessage(await post(app, corpus(PHOTO), { format: 'auto', formats: ['gif'] }));
  assert.match(message, /operations\.formats\.0 must be one of jpeg, png, webp, avif/);
});

test('max_bytes that is neither a positive integer nor "input" is 400 saying both', async (t) => {
  const app = await buildTestApp(t);
  const message = errorMessage(await post(app, corpus(PHOTO), { max_bytes: 0 }));
  assert.match(message, /operations\.max_bytes must be a positive integer or "input"/);
});

for (const [fixture, strip] of [
  ['paris_exif_xmp_icc.jpg', true],
  ['paris_exif_xmp_icc.jpg', false],
  ['synthetic-exif-gps-orient6-p3.jpg', true],
  ['synthetic-exif-gps-orient6-p3.jpg', false],
  ['synthetic-cmyk-with-icc.jpg', true],
  ['bggn4a16.png', true],
] as const) {
  test(`quality "auto" keeps what a fixed quality keeps: ${fixture}, strip ${strip}`, async (t) => {
    const app = await buildTestApp(t);
    const fixed = await post(app, corpus(fixture), { strip, format: 'webp' });
    const auto = await post(app, corpus(fixture), { strip, format: 'webp', quality: 'auto:eco' });
    assert.equal(auto.statusCode, 200, auto.body);
    const [a, b] = await Promise.all([sharp(fixed.rawPayload).metadata(), sharp(auto.rawPayload).metadata()]);
    assert.deepEqual(
      [b.width, b.height, b.orientation, b.space, b.hasAlpha, !!b.icc, !!b.exif, !!b.xmp],
      [a.width, a.height, a.orientation, a.space, a.hasAlpha, !!a.icc, !!a.exif, !!a.xmp],
    );
  });
}

test('format "auto" with quality "auto" answers AVIF for a photograph, within the band', async (t) => {
  const app = await buildTestApp(t);
  const res = await post(app, corpus(PHOTO), { format: 'auto', quality: 'auto' });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['x-service-output-format'], 'avif');
  const score = await scoreOf(corpus(PHOTO), res.rawPayload);
  assert.ok(Math.abs(score - QUALITY_LEVELS.auto) <= BAND, `score ${score.toFixed(1)}`);
});
