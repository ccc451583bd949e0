// Every path that writes an image writes the same image. A corpus of real and made inputs (animations, CMYK with and
// without a profile, grey with a profile, 16-bit, wide gamut, alpha, EXIF orientations 1–8, 1×1 and 2×2) goes through
// the plain pipeline, quality "auto", format "auto", max_bytes (a cap any output meets, and "input"), strip false,
// placeholder and the delivery URL of the same operations. The plain path's output is the reference; every other one
// must have its frames, upright size, transparency, kind of ICC profile, bit depth (PNG against PNG) and colour,
// and POST /v1/image/info with the same operations must predict what POST /v1/image writes, or both refuse alike.
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import sharp, { type Metadata } from 'sharp';
import { deliveryOptionsOf, deliveryPath } from '../../src/delivery/url.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';
import { sendImage, startOrigin } from '../helpers/origin-server.ts';

type Ops = Record<string, unknown>;

interface Row {
  /** A file of test/fixtures/corpus (sources and licences in its README). */
  file: string;
  /** The operations every path shares (animations name webp: the one format that keeps their frames). */
  ops: Ops;
  /** The plain output's upright size and frames. */
  size: [number, number];
  frames?: number;
  /** The plain output keeps 16 bits per sample. */
  deep?: true;
  /** The operations add pixels the input has not (a turn's corners): its colour is not the input's. */
  newPixels?: true;
}

const WEBP: Ops = { format: 'webp' };
const SMALL = (w: number): Ops => ({ resize: { w } });

const ROWS: Row[] = [
  // 30 frames, 21 of them identical to the one before: libwebp merges those, the service writes each back.
  { file: 'rotating-squares.gif', ops: WEBP, size: [80, 80], frames: 30 },
  { file: 'animated-loop-3.gif', ops: WEBP, size: [370, 285], frames: 10 },
  { file: 'synthetic-animated-alpha.webp', ops: WEBP, size: [64, 48], frames: 5 },
  { file: 'synthetic-animated-2x2.gif', ops: WEBP, size: [2, 2], frames: 3 },
  { file: 'synthetic-gif-frames-beyond-screen.gif', ops: WEBP, size: [64, 48], frames: 4 },
  { file: 'pil_sample_cmyk.jpg', ops: {}, size: [100, 100] },
  { file: 'synthetic-cmyk-with-icc.jpg', ops: {}, size: [160, 100] },
  // Its profile is far from sharp's built-in CMYK one: converting with the wrong one shows.
  { file: 'synthetic-cmyk-naive-icc.jpg', ops: {}, size: [160, 100] },
  { file: 'synthetic-cmyk-naive-icc.jpg', ops: { ...SMALL(80), format: 'png' }, size: [80, 50] },
  // A turn by another angle than 90 adds transparent corners: CMYK pixels with an alpha channel.
  { file: 'pil_sample_cmyk.jpg', ops: { rotate: 30, format: 'png' }, size: [137, 137], newPixels: true },
  {
    file: 'synthetic-cmyk-with-icc.jpg',
    ops: { rotate: 30, format: 'webp' },
    size: [189, 167],
    newPixels: true,
  },
  { file: 'concert.jpg', ops: {}, size: [400, 267] },
  { file: 'synthetic-grey-linear-icc.jpg', ops: {}, size: [160, 100] },
  { file: 'synthetic-grey16-linear-icc.png', ops: {}, size: [160, 100], deep: true },
  { file: 'Flag_of_the_Netherlands-16bit.png', ops: SMALL(300), size: [300, 200], deep: true },
  { file: 'tbgn2c16.png', ops: {}, size: [32, 32], deep: true },
  { file: 'bggn4a16.png', ops: {}, size: [32, 32], deep: true },
  { file: 'synthetic-exif-gps-orient6-p3.jpg', ops: {}, size: [100, 160] },
  { file: 'P3-sRGB-color-bars.jpg', ops: SMALL(250), size: [250, 200] },
  { file: 'rgb-to-gbr-test.jpg', ops: SMALL(200), size: [200, 200] },
  { file: 'synthetic-icc-a98-compatible.jpg', ops: {}, size: [160, 100] },
  { file: 'p3.png', ops: {}, size: [8, 8] },
  { file: 'abc.png', ops: {}, size: [512, 256] },
  ...[1, 2, 3, 4, 5, 6, 7, 8].map((n): Row => ({
    file: `Landscape_${n}.jpg`,
    ops: SMALL(200),
    size: [200, 150],
  })),
  { file: 'prophoto.png', ops: {}, size: [1, 1] },
  { file: '2x2_fdcce6.png', ops: {}, size: [2, 2] },
  { file: 'synthetic-1x1.jpg', ops: {}, size: [1, 1] },
  { file: 'hopper.webp', ops: {}, size: [128, 128] },
  { file: 'pitm.avif', ops: SMALL(512), size: [512, 100] },
];

/**
 * Operations whose answer is a refusal on some inputs (rotate, vertical flip and trim on an animation's frames; trim
 * on a tiny image): POST /v1/image/info must predict what POST writes for them too, or refuse alike.
 */
const PREDICTIONS: { file: string; ops: Ops }[] = [
  { file: 'rotating-squares.gif', ops: { ...WEBP, rotate: 90 } },
  { file: 'rotating-squares.gif', ops: { ...WEBP, flip: 'vertical' } },
  { file: 'rotating-squares.gif', ops: { ...WEBP, flip: 'horizontal' } },
  { file: 'rotating-squares.gif', ops: { ...WEBP, trim: true } },
  { file: 'synthetic-animated-alpha.webp', ops: { ...WEBP, crop: { x: 8, y: 8, w: 32, h: 24 } } },
  { file: 'synthetic-gif-frames-beyond-screen.gif', ops: { resize: { w: 32 } } },
  { file: '2x2_fdcce6.png', ops: { trim: true } },
  { file: 'synthetic-1x1.jpg', ops: { trim: true } },
  { file: 'synthetic-animated-2x2.gif', ops: { ...WEBP, trim: true } },
  { file: 'Landscape_6.jpg', ops: { trim: { threshold: 40 }, ...SMALL(120) } },
];

/**
 * Colour tolerance, in 8-bit sRGB levels, of the largest difference of one cell of a 4×4 grid per frame (each cell
 * the mean of a sixteenth of the image, profile applied, alpha flattened on grey). Each path is compared with the
 * plain path in the format it wrote (format auto's WebP with the plain path's WebP), as codecs move colour in their
 * own ways (lossy WebP moves a quarter of a photograph by up to 11 levels from its JPEG). A path that writes the
 * same encode (strip false, placeholder, a cap every output meets, the delivery URL, format auto at the same quality)
 * may differ by rounding only; one that lowers or raises the quality (quality auto, a cap of the input's size) by
 * what that moves a sixteenth of a sharp-edged test card. A dropped, doubled or misread profile moves cells by 14 to
 * 100 levels in this corpus (Display P3, Generic RGB, the linear grey, CMYK).
 */
const SAME_ENCODE = 4;
const OTHER_QUALITY = 8;
/** The plain path's colour against the input's, whole-image means: what one lossy encode at quality 80 moves. */
const ENCODE_MEAN = 8;

interface Path {
  name: string;
  ops(base: Ops): Ops;
  tolerance: number;
  /** The path may write another format than the plain path: it is compared with the plain path in its format. */
  formatMayDiffer?: true;
  /** Sent as a delivery URL (GET) with this Accept header, not as POST /v1/image. */
  delivery?: { accept: string };
}

const withoutFormat = ({ format: _format, ...rest }: Ops): Ops => rest;
const MODERN_ACCEPT = 'image/avif,image/webp,image/*;q=0.8,*/*;q=0.5';

const PATHS: Path[] = [
  { name: 'quality auto', ops: (o) => ({ ...o, quality: 'auto' }), tolerance: OTHER_QUALITY },
  {
    name: 'format auto',
    ops: (o) => ({ ...withoutFormat(o), format: 'auto' }),
    tolerance: SAME_ENCODE,
    formatMayDiffer: true,
  },
  { name: 'max_bytes any', ops: (o) => ({ ...o, max_bytes: 100_000_000 }), tolerance: SAME_ENCODE },
  { name: 'max_bytes input', ops: (o) => ({ ...o, max_bytes: 'input' }), tolerance: OTHER_QUALITY },
  { name: 'strip false', ops: (o) => ({ ...o, strip: false }), tolerance: SAME_ENCODE },
  { name: 'placeholder', ops: (o) => ({ ...o, placeholder: true }), tolerance: SAME_ENCODE },
  {
    name: 'delivery URL',
    ops: (o) => o,
    tolerance: SAME_ENCODE,
    delivery: { accept: MODERN_ACCEPT },
  },
  {
    name: 'delivery URL f:auto',
    ops: (o) => ({ ...withoutFormat(o), format: 'auto' }),
    tolerance: SAME_ENCODE,
    formatMayDiffer: true,
    delivery: { accept: MODERN_ACCEPT },
  },
];

/** What a path answered: an image and what it is, or a refusal's status and code. */
type Written =
  | {
      ok: true;
      data: Buffer;
      format: string;
      width: number;
      height: number;
      frames: number;
      /** The encoder quality the answer names in X-Service-Operations (none for PNG). */
      quality: number | undefined;
    }
  | { ok: false; status: number; code: string; message: string };

interface Setup {
  server: TestApp;
  source(file: string): string;
  accountId: string;
  secret: string;
}

const CONTENT_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
};

async function setUp(t: Pick<TestContext, 'after'>): Promise<Setup> {
  const server = await buildTestApp(t as TestContext, {
    FETCH_ALLOW_CIDRS: '127.0.0.0/8',
    INFO_RATE_LIMIT: '100000',
    QUOTA_FREE: '100000',
  });
  const origin = await startOrigin(t as TestContext, (req, res) => {
    const file = decodeURIComponent((req.url ?? '').replace(/^\/corpus\//, ''));
    sendImage(res, corpus(file), CONTENT_TYPES[file.split('.').pop() ?? ''] ?? 'application/octet-stream');
  });
  const secret = await server.app.inject({
    method: 'POST',
    url: '/v1/delivery/secret',
    headers: server.auth,
  });
  assert.equal(secret.statusCode, 200, secret.body);
  const made = secret.json<{ accountId: string; secret: string }>();
  return {
    server,
    source: (file) => origin.url(`/corpus/${encodeURIComponent(file)}`),
    accountId: made.accountId,
    secret: made.secret,
  };
}

/**
 * One server for the whole file, closed after its last test: jobs that are not on the in-process allow-list (every
 * search) run in child processes the server starts once and reuses, and starting them is most of a first search.
 */
const setup = await setUp({ after: (fn: () => unknown) => after(async () => void (await fn())) });

function refusal(status: number, body: string): Written {
  const error = (JSON.parse(body) as { error?: { code?: string; message?: string } }).error;
  return { ok: false, status, code: String(error?.code), message: String(error?.message) };
}

async function written(status: number, body: Buffer, headers: Record<string, unknown>): Promise<Written> {
  if (status !== 200) return refusal(status, body.toString('utf8'));
  const meta = await sharp(body, { pages: -1 }).metadata();
  const quality = /(?:^|,)quality=(\d+)/.exec(String(headers['x-service-operations']))?.[1];
  return {
    ok: true,
    data: body,
    format: String(headers['x-service-output-format']),
    quality: quality === undefined ? undefined : Number(quality),
    width: meta.width ?? 0,
    height: meta.pageHeight ?? meta.height ?? 0,
    frames: meta.pages ?? 1,
  };
}

async function post(setup: Setup, file: string, ops: Ops): Promise<Written> {
  const res = await setup.server.app.inject({
    method: 'POST',
    url: `/v1/image?operations=${encodeURIComponent(JSON.stringify(ops))}`,
    headers: { ...setup.server.auth, 'content-type': 'application/octet-stream' },
    payload: corpus(file),
  });
  return written(res.statusCode, res.rawPayload, res.headers);
}

async function deliver(setup: Setup, file: string, ops: Ops, accept: string): Promise<Written> {
  const url = deliveryPath(setup.accountId, setup.secret, setup.source(file), deliveryOptionsOf(ops));
  const res = await setup.server.app.inject({ method: 'GET', url, headers: { accept } });
  return written(res.statusCode, res.rawPayload, res.headers);
}

interface Prediction {
  format: string | null;
  width: number;
  height: number;
  frames: number;
  exact?: false;
}

async function info(
  setup: Setup,
  file: string,
  ops: Ops,
): Promise<{ ok: true; output: Prediction } | Extract<Written, { ok: false }>> {
  const res = await setup.server.app.inject({
    method: 'POST',
    url: `/v1/image/info?operations=${encodeURIComponent(JSON.stringify(ops))}`,
    headers: { ...setup.server.auth, 'content-type': 'application/octet-stream' },
    payload: corpus(file),
  });
  if (res.statusCode !== 200) return refusal(res.statusCode, res.body) as Extract<Written, { ok: false }>;
  return { ok: true, output: res.json<{ output: Prediction }>().output };
}

const described = (w: Written) =>
  w.ok ? `${w.format} ${w.width}×${w.height}, ${w.frames} frame(s)` : `${w.status} ${w.code}: ${w.message}`;

/** POST /v1/image/info's prediction against what POST /v1/image wrote, or both refusing with one code. */
async function assertPredicted(setup: Setup, file: string, ops: Ops, wrote: Written, label: string) {
  const predicted = await info(setup, file, ops);
  if (!predicted.ok || !wrote.ok) {
    assert.deepEqual(
      predicted.ok
        ? `200 (predicts ${JSON.stringify(predicted.output)})`
        : `${predicted.status} ${predicted.code}`,
      wrote.ok ? `200 (writes ${described(wrote)})` : `${wrote.status} ${wrote.code}`,
      `${label}: /v1/image/info and POST /v1/image must both answer or both refuse alike`,
    );
    return;
  }
  const { output } = predicted;
  const actual = { format: wrote.format, width: wrote.width, height: wrote.height, frames: wrote.frames };
  if (output.exact === false) {
    // trim: the size is known only from the pixels; the prediction is the untrimmed size, an upper bound.
    assert.ok(
      wrote.width <= output.width && wrote.height <= output.height,
      `${label}: info's upper bound ${output.width}×${output.height} is below the ${wrote.width}×${wrote.height} written`,
    );
    Object.assign(actual, { width: output.width, height: output.height });
  }
  assert.deepEqual(
    { ...output, format: output.format ?? wrote.format, exact: undefined },
    { ...actual, exact: undefined },
    `${label}: /v1/image/info predicts ${JSON.stringify(output)}, POST /v1/image writes ${described(wrote)}`,
  );
}

// ---------------------------------------------------------------- what an image is

type ProfileClass = 'none' | 'rgb' | 'grey' | 'cmyk' | 'other';

/** The kind of an embedded ICC profile, from its header's colour space field (bytes 16–19). */
function profileClass(meta: Pick<Metadata, 'icc'>): ProfileClass {
  if (!meta.icc) return 'none';
  const space = meta.icc.toString('latin1', 16, 20);
  return space === 'RGB ' ? 'rgb' : space === 'GRAY' ? 'grey' : space === 'CMYK' ? 'cmyk' : 'other';
}

/**
 * One frame's colour: `grid`×`grid` cells of 8-bit sRGB, its profile applied, alpha flattened on grey. `page`: a frame
 * of an animation (a still is read as sharp reads it: a HEIF's primary image). sharp applies an embedded profile to
 * 8-bit images only, so a 16-bit frame is first cast to 8 bits with its profile kept.
 */
async function frameColour(data: Buffer, page: number | undefined, grid = 4): Promise<number[]> {
  const at = page === undefined ? {} : { page };
  const meta = await sharp(data, at).metadata();
  let frame = sharp(data, at);
  if (meta.depth === 'ushort') {
    const cast = await frame
      .keepIccProfile()
      .toColourspace((meta.channels ?? 3) <= 2 ? 'b-w' : 'srgb')
      .png()
      .toBuffer();
    frame = sharp(cast);
  }
  const cells = await frame
    .autoOrient()
    .flatten({ background: '#808080' })
    .toColourspace('srgb')
    .resize(grid, grid, { fit: 'fill' })
    .raw()
    .toBuffer();
  return [...cells];
}

/** Whether any pixel of any frame is not opaque: an alpha channel that is all opaque shows nothing. */
async function transparent(data: Buffer): Promise<boolean> {
  const image = sharp(data, { pages: -1 });
  const meta = await image.metadata();
  if (!meta.hasAlpha) return false;
  const stats = await image.stats();
  const alpha = stats.channels[stats.channels.length - 1]!;
  return alpha.min < (meta.depth === 'ushort' ? 65535 : 255);
}

/** What an output is beyond its size and frames. */
interface Facts {
  profile: ProfileClass;
  transparent: boolean;
  depth: string | undefined;
  /** The colour of each frame. */
  colours: number[][];
}

async function factsOf(data: Buffer, frames: number): Promise<Facts> {
  const meta = await sharp(data).metadata();
  const colours = [];
  for (let page = 0; page < frames; page++)
    colours.push(await frameColour(data, frames > 1 ? page : undefined));
  return { profile: profileClass(meta), transparent: await transparent(data), depth: meta.depth, colours };
}

/** The largest difference of one cell (one channel) between two frames' colours. */
function colourDistance(a: number[], b: number[]): number {
  return Math.max(...a.map((v, i) => Math.abs(v - (b[i] ?? 0))));
}

/**
 * A grey profile describes no RGB pixels: WebP and AVIF (colour only, as written here) carry the grey converted to
 * sRGB, which is the same image. Every other class must be the plain path's.
 */
function sameProfileClass(plain: ProfileClass, path: ProfileClass, format: string): boolean {
  return path === plain || (plain === 'grey' && path === 'rgb' && (format === 'webp' || format === 'avif'));
}

/**
 * The profile the plain path keeps for an input (strip keeps the ICC profile): CMYK pixels become RGB, which a CMYK
 * profile cannot describe, so they are converted to sRGB and tagged so, with or without a profile of their own.
 */
function expectedProfile(input: Metadata): ProfileClass {
  return input.space === 'cmyk' ? 'rgb' : profileClass(input);
}

type Image = Extract<Written, { ok: true }> & { facts: Facts };

/** The plain path's output in each format it is asked for (the row's operations, that format named), made once. */
function plainOutputs(setup: Setup, row: Row) {
  const made = new Map<string, Promise<Image>>();
  return (format?: string, quality?: number): Promise<Image> => {
    const key = `${format ?? ''}:${quality ?? ''}`;
    let image = made.get(key);
    if (!image) {
      image = (async () => {
        const ops = {
          ...row.ops,
          ...(format !== undefined && { format }),
          ...(quality !== undefined && { quality }),
        };
        const out = await post(setup, row.file, ops);
        assert.ok(out.ok, `${row.file} plain ${JSON.stringify(ops)}: ${described(out)}`);
        if (!out.ok) throw new Error('unreachable');
        return { ...out, facts: await factsOf(out.data, out.frames) };
      })();
      made.set(key, image);
    }
    return image;
  };
}

async function assertSameImage(
  plain: Image,
  out: Written,
  path: Path,
  label: string,
  inFormat: (format: string, quality?: number) => Promise<Image>,
) {
  assert.ok(out.ok, `${label}: refused (${described(out)}) where the plain path writes ${described(plain)}`);
  if (!out.ok) return;
  assert.equal(out.frames, plain.frames, `${label}: ${out.frames} frame(s), the plain path ${plain.frames}`);
  assert.deepEqual(
    [out.width, out.height],
    [plain.width, plain.height],
    `${label}: ${out.width}×${out.height} upright, the plain path ${plain.width}×${plain.height}`,
  );
  if (!path.formatMayDiffer) assert.equal(out.format, plain.format, `${label}: format`);
  const facts = await factsOf(out.data, out.frames);
  assert.equal(
    facts.transparent,
    plain.facts.transparent,
    `${label}: ${facts.transparent ? 'has' : 'has no'} transparent pixels (${out.format}), the plain path ${plain.facts.transparent ? 'has' : 'has none'}`,
  );
  assert.ok(
    sameProfileClass(plain.facts.profile, facts.profile, out.format),
    `${label}: ICC profile ${facts.profile} (${out.format}), the plain path ${plain.facts.profile} (${plain.format})`,
  );
  if (out.format === 'png' && plain.format === 'png') {
    assert.equal(
      facts.depth,
      plain.facts.depth,
      `${label}: PNG depth ${facts.depth}, the plain path ${plain.facts.depth}`,
    );
  }
  // A path that chose another quality (quality auto, a byte cap) is compared with the plain path at that quality: the
  // look a quality buys is the encoder's, not the path's (a 2×2 GIF capped at its 60 bytes is written at quality 30).
  const otherQuality = path.tolerance === OTHER_QUALITY && out.quality !== plain.quality;
  const same =
    out.format === plain.format && !otherQuality
      ? plain
      : await inFormat(out.format, otherQuality ? out.quality : undefined);
  for (let frame = 0; frame < facts.colours.length; frame++) {
    const distance = colourDistance(facts.colours[frame]!, same.facts.colours[frame] ?? []);
    assert.ok(
      distance <= path.tolerance,
      `${label}: frame ${frame}'s colour differs from the plain path's ${same.format} by ${distance} levels (tolerance ${path.tolerance})`,
    );
  }
}

for (const row of ROWS) {
  test(`every path writes the same image: ${row.file} ${JSON.stringify(row.ops)}`, async (t) => {
    const input = corpus(row.file);
    const inputMeta = await sharp(input).metadata();
    const inFormat = plainOutputs(setup, row);
    const plain = await inFormat();

    await t.test('plain: the upright size, frames, profile, depth and colour of the input', async () => {
      const label = `${row.file} plain ${JSON.stringify(row.ops)}`;
      assert.deepEqual(
        [plain.width, plain.height, plain.frames],
        [...row.size, row.frames ?? 1],
        `${label}: size and frames`,
      );
      assert.equal(plain.facts.profile, expectedProfile(inputMeta), `${label}: ICC profile class`);
      if (row.deep)
        assert.equal(plain.facts.depth, 'ushort', `${label}: a 16-bit PNG is written with 16 bits`);
      if (!row.newPixels) {
        const animated = plain.frames > 1 ? 0 : undefined;
        const [written, read] = [
          await frameColour(plain.data, animated, 1),
          await frameColour(input, animated, 1),
        ];
        const distance = colourDistance(written, read);
        assert.ok(
          distance <= ENCODE_MEAN,
          `${label}: mean colour differs from the input's by ${distance} levels`,
        );
      }
      await assertPredicted(setup, row.file, row.ops, plain, label);
    });

    for (const path of PATHS) {
      await t.test(path.name, async () => {
        const ops = path.ops(row.ops);
        const label = `${row.file} ${path.name} ${JSON.stringify(ops)}`;
        const out = path.delivery
          ? await deliver(setup, row.file, ops, path.delivery.accept)
          : await post(setup, row.file, ops);
        await assertSameImage(plain, out, path, label, inFormat);
        if (!path.delivery) await assertPredicted(setup, row.file, ops, out, label);
      });
    }
  });
}

test('/v1/image/info predicts what POST /v1/image writes, or both refuse alike, where operations may be refused', async (t) => {
  for (const { file, ops } of PREDICTIONS) {
    await t.test(`${file} ${JSON.stringify(ops)}`, async () => {
      await assertPredicted(setup, file, ops, await post(setup, file, ops), `${file} ${JSON.stringify(ops)}`);
    });
  }
});
