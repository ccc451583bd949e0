// Pure parts of delivery URLs: the path's grammar and signature, Accept negotiation, and the result cache's bounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../src/errors.ts';
import { accountTag, deliveryTags } from '../../src/delivery/derivatives.ts';
import { negotiate, negotiateFormat } from '../../src/delivery/negotiate.ts';
import { openResultCache, resultCacheKey } from '../../src/delivery/result-cache.ts';
import {
  deliveryOptionsOf,
  deliveryPath,
  formatDeliveryOptions,
  parseDeliveryRequest,
  signatureMatches,
  splitDeliveryPath,
} from '../../src/delivery/url.ts';
import { operationsSchema, validateOperations } from '../../src/pipeline/operations.ts';

const schema = operationsSchema(10_000);
const SOURCE = 'https://images.example.com/a b/photo.jpg?v=2';

test('delivery url: the path is account, signature, options in canonical order, then the source as one segment', () => {
  const path = deliveryPath('acc-1', 'imgpd_s', SOURCE, {
    f: 'auto',
    w: 800,
    exp: 1_900_000_000,
    fit: 'cover',
  });
  const parts = splitDeliveryPath(path);
  assert.equal(parts?.accountId, 'acc-1');
  assert.equal(parts?.signedPart, `w:800/fit:cover/f:auto/exp:1900000000/${encodeURIComponent(SOURCE)}`);
  assert.ok(signatureMatches('imgpd_s', parts.signedPart, parts.signature));
  assert.equal(signatureMatches('imgpd_other', parts.signedPart, parts.signature), false);
  assert.equal(signatureMatches('imgpd_s', parts.signedPart, 'short'), false);
});

test('delivery url: the account id is read as written, never percent-decoded (one spelling names the account)', () => {
  const path = deliveryPath('acc-1', 'imgpd_s', SOURCE, { w: 800 });
  assert.equal(splitDeliveryPath(path)?.accountId, 'acc-1');
  assert.equal(splitDeliveryPath(path.replace('/acc-1/', '/%61cc-1/'))?.accountId, '%61cc-1');
});

test('delivery url: only the canonical spelling of a signature verifies (no inserted character, no spare bits)', () => {
  const parts = splitDeliveryPath(deliveryPath('acc-1', 'imgpd_s', SOURCE, { w: 800 }));
  assert.ok(parts && signatureMatches('imgpd_s', parts.signedPart, parts.signature));
  const { signature, signedPart } = parts;
  // A base64url decoder skips every one of these; each spelling would otherwise be another valid URL.
  for (const inserted of ".~!*'(),;$&") {
    for (const at of [0, 1, 20, signature.length]) {
      const spelled = signature.slice(0, at) + inserted + signature.slice(at);
      assert.equal(signatureMatches('imgpd_s', signedPart, spelled), false, spelled);
    }
  }
  // The last of 43 characters carries 4 bits: its 2 spare bits decode to the same 32 bytes when set.
  const last = signature.at(-1) as string;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const sameBits = [1, 2, 3].map((spare) => alphabet[alphabet.indexOf(last) ^ spare] as string);
  for (const other of sameBits) {
    const spelled = signature.slice(0, -1) + other;
    assert.deepEqual(Buffer.from(spelled, 'base64url'), Buffer.from(signature, 'base64url'));
    assert.equal(signatureMatches('imgpd_s', signedPart, spelled), false, spelled);
  }
  assert.equal(signatureMatches('imgpd_s', signedPart, `${signature}=`), false, 'padding');
  const percentEncoded = `%${signature.charCodeAt(0).toString(16).toUpperCase()}${signature.slice(1)}`;
  assert.equal(signatureMatches('imgpd_s', signedPart, percentEncoded), false, 'a percent-encoded character');
});

test('delivery url: options parse into operations; the normalised form ignores order and expiry', () => {
  const a = parseDeliveryRequest(`q:60/w:300/strip:false/exp:5/${encodeURIComponent(SOURCE)}`, schema);
  const b = parseDeliveryRequest(`w:300/strip:false/q:60/${encodeURIComponent(SOURCE)}`, schema);
  assert.equal(a.source, SOURCE);
  assert.deepEqual(a.operations, { resize: { w: 300 }, quality: 60, strip: false });
  assert.equal(a.expiresAt, 5);
  assert.equal(a.normalisedOptions, b.normalisedOptions);
  assert.equal(parseDeliveryRequest(`f:auto/${encodeURIComponent(SOURCE)}`, schema).autoFormat, true);
});

test('delivery url: position, quality auto and its levels, the byte cap and the formats list say what the JSON form says', () => {
  const parsed = (options: string) =>
    parseDeliveryRequest(`${options}/${encodeURIComponent(SOURCE)}`, schema).operations;
  assert.deepEqual(parsed('w:300/h:200/fit:cover/pos:attention'), {
    resize: { w: 300, h: 200, fit: 'cover', position: 'attention' },
  });
  assert.deepEqual(parsed('w:300/h:200/fit:cover/pos:0.25,1').resize, {
    w: 300,
    h: 200,
    fit: 'cover',
    position: { x: 0.25, y: 1 },
  });
  assert.equal(parsed('q:auto').quality, 'auto');
  assert.equal(parsed('q:auto:eco').quality, 'auto:eco');
  assert.equal(parsed('q:auto:78.5').quality, 'auto:78.5');
  assert.equal(parsed('max_bytes:50000').max_bytes, 50000);
  assert.equal(parsed('max_bytes:input').max_bytes, 'input');
  assert.deepEqual(parsed('f:auto/formats:webp,png').formats, ['webp', 'png']);
});

test('delivery url: every operation written as URL options parses back to the same operations', () => {
  const everything = {
    resize: { w: 300, h: 200, fit: 'cover', position: { x: 0.5, y: 0.125 } },
    format: 'auto',
    formats: ['avif', 'jpeg'],
    quality: 'auto:high',
    max_bytes: 'input',
    strip: false,
  };
  const options = deliveryOptionsOf(everything);
  assert.equal(
    formatDeliveryOptions(options),
    'w:300/h:200/fit:cover/pos:0.5,0.125/f:auto/formats:avif,jpeg/q:auto:high/max_bytes:input/strip:false',
  );
  const back = parseDeliveryRequest(
    `${formatDeliveryOptions(options)}/${encodeURIComponent(SOURCE)}`,
    schema,
  );
  assert.deepEqual(back.operations, everything);
  assert.equal(back.normalisedOptions, formatDeliveryOptions(options));
});

test('delivery url: the operations every peer has, written as URL options parse back to the same operations', () => {
  const cases: [Record<string, unknown>, string][] = [
    [
      {
        trim: { threshold: 20 },
        crop: { x: 1, y: 2, w: 30, h: 40 },
        rotate: -90,
        flip: 'both',
        resize: { w: 20, dpr: 1.5 },
        pad: { top: 1, right: 2, bottom: 3, left: 4 },
        background: '#ff000080',
        grayscale: true,
        modulate: { brightness: 1.2, saturation: 0.5, hue: -30 },
        blur: 0.5,
        sharpen: 2,
      },
      'trim:20/crop:1,2,30,40/rot:-90/flip:both/w:20/dpr:1.5/pad:1,2,3,4/bg:ff000080/gray:true/bri:1.2/sat:0.5/hue:-30/blur:0.5/sharpen:2',
    ],
    [{ trim: true, pad: 8, sharpen: true }, 'trim:true/pad:8/sharpen:true'],
  ];
  for (const [operations, text] of cases) {
    const options = deliveryOptionsOf(operations);
    assert.equal(formatDeliveryOptions(options), text);
    const back = parseDeliveryRequest(`${text}/${encodeURIComponent(SOURCE)}`, schema);
    assert.deepEqual(back.operations, operations);
  }
});

test('delivery url: a bad value answers the message the JSON form gives the same value', () => {
  const cases: [string, unknown][] = [
    ['w:0', { resize: { w: 0 } }],
    ['w:abc', { resize: { w: 'abc' } }],
    ['fit:stretch/w:5', { resize: { w: 5, fit: 'stretch' } }],
    ['w:5/pos:attention', { resize: { w: 5, position: 'attention' } }],
    ['w:5/fit:cover/pos:2,0', { resize: { w: 5, fit: 'cover', position: { x: 2, y: 0 } } }],
    ['w:5/fit:cover/pos:a,0', { resize: { w: 5, fit: 'cover', position: { x: 'a', y: 0 } } }],
    ['q:auto:best', { quality: 'auto:best' }],
    ['q:0', { quality: 0 }],
    ['max_bytes:0', { max_bytes: 0 }],
    ['max_bytes:output', { max_bytes: 'output' }],
    ['formats:webp', { formats: ['webp'] }],
    ['f:auto/formats:webp,webp', { format: 'auto', formats: ['webp', 'webp'] }],
    ['f:auto/formats:gif', { format: 'auto', formats: ['gif'] }],
    ['f:jpg', { format: 'jpg' }],
    ['strip:yes', { strip: 'yes' }],
  ];
  for (const [text, json] of cases) {
    const fromJson = (() => {
      try {
        validateOperations(schema, json);
      } catch (err) {
        return (err as ApiError).message;
      }
      return 'accepted';
    })();
    assert.notEqual(fromJson, 'accepted', text);
    assert.throws(
      () => parseDeliveryRequest(`${text}/${encodeURIComponent(SOURCE)}`, schema),
      (err: unknown) => err instanceof ApiError && err.message === fromJson,
      text,
    );
  }
});

test('delivery url: a bad, unknown or repeated option is invalid_operations naming it', () => {
  const cases: [string, string][] = [
    ['w:abc', 'w'],
    ['tint:3', 'tint'],
    ['blur:0.1', 'operations.blur must be a number from 0.3 to 1000'],
    ['crop:1,2,3', 'operations.crop must be a region'],
    ['bg:red', 'operations.background must be a colour'],
    ['rot:-400', 'operations.rotate must be an integer from -359 to 359'],
    ['w:10/w:20', 'twice'],
    ['f:gif', 'operations.format must'],
    ['q:101', 'quality'],
    ['fit:stretch', 'fit'],
  ];
  for (const [text, named] of cases) {
    assert.throws(
      () => parseDeliveryRequest(`${text}/${encodeURIComponent(SOURCE)}`, schema),
      (err: unknown) =>
        err instanceof ApiError && err.code === 'invalid_operations' && err.message.includes(named),
      text,
    );
  }
});

test('delivery url: v: is signed, in canonical place before exp:, and part of the normalised options (the cache key)', () => {
  const path = deliveryPath('acc-1', 'imgpd_s', SOURCE, { exp: 9, v: '2026-11-27', w: 10 });
  const parts = splitDeliveryPath(path);
  assert.equal(parts?.signedPart, `w:10/v:2026-11-27/exp:9/${encodeURIComponent(SOURCE)}`);
  assert.ok(signatureMatches('imgpd_s', parts.signedPart, parts.signature));
  const bumped = parts.signedPart.replace('v:2026-11-27', 'v:2026-11-28');
  assert.equal(signatureMatches('imgpd_s', bumped, parts.signature), false);
  const one = parseDeliveryRequest(parts.signedPart, schema);
  const other = parseDeliveryRequest(bumped, schema);
  assert.notEqual(one.normalisedOptions, other.normalisedOptions);
  assert.equal(one.normalisedOptions, 'w:10/v:2026-11-27');
  assert.deepEqual(one.operations, { resize: { w: 10 } });
});

test('delivery url: a v: token is 1 to 32 of [A-Za-z0-9_-]', () => {
  for (const token of ['a', 'A-z_09', 'x'.repeat(32)]) {
    assert.equal(
      parseDeliveryRequest(`v:${token}/${encodeURIComponent(SOURCE)}`, schema).normalisedOptions,
      `v:${token}`,
    );
  }
  for (const token of ['', 'x'.repeat(33), 'a.b', 'a%20b', 'ä']) {
    assert.throws(
      () => parseDeliveryRequest(`v:${token}/${encodeURIComponent(SOURCE)}`, schema),
      (err: unknown) =>
        err instanceof ApiError && err.code === 'invalid_operations' && err.message.includes('option v'),
      token,
    );
  }
});

test('cache tags: the account and the source as hashed tokens, never the source URL or the account id', () => {
  const tags = deliveryTags('acc-1', SOURCE);
  assert.match(tags.account, /^imgpipe-a-[0-9a-f]{24}$/);
  assert.match(tags.source, /^imgpipe-s-[0-9a-f]{24}$/);
  assert.equal(tags.account, accountTag('acc-1'));
  assert.notEqual(deliveryTags('acc-2', SOURCE).source, tags.source);
  assert.notEqual(deliveryTags('acc-1', `${SOURCE}x`).source, tags.source);
  assert.ok(!tags.source.includes('images') && !tags.account.includes('acc-1'));
});

test('negotiation: AVIF over WebP over legacy; wildcards and q=0 accept neither; no Accept is legacy', () => {
  assert.equal(negotiateFormat('image/avif,image/webp,image/apng,*/*;q=0.8'), 'avif');
  assert.equal(negotiateFormat('image/webp,*/*'), 'webp');
  assert.equal(negotiateFormat('image/avif;q=0, image/webp;q=0.5'), 'webp');
  assert.equal(negotiateFormat('image/*,*/*'), 'legacy');
  assert.equal(negotiateFormat(undefined), 'legacy');
  assert.equal(negotiateFormat(''), 'legacy');
});

test('negotiation with a formats list: the listed formats Accept takes (JPEG and PNG always), else legacy', () => {
  const chromium = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8';
  assert.deepEqual(negotiate(['jpeg', 'webp', 'avif'], chromium).candidates, ['jpeg', 'webp', 'avif']);
  assert.deepEqual(negotiate(['jpeg', 'webp', 'avif'], 'image/webp,*/*').candidates, ['jpeg', 'webp']);
  assert.deepEqual(negotiate(['webp', 'avif'], undefined), {
    key: 'legacy',
    candidates: [],
    fallback: 'legacy',
    acceptsWebp: false,
  });
  assert.deepEqual(negotiate(['png', 'avif'], 'image/*').candidates, ['png']);
  assert.deepEqual(negotiate(undefined, chromium), {
    key: 'avif',
    candidates: [],
    fallback: 'avif',
    acceptsWebp: true,
  });
});

test('negotiation: AVIF without WebP is its own key (an animation is answered as WebP where Accept takes it)', () => {
  assert.equal(negotiate(undefined, 'image/avif').key, 'avif-without-webp');
  assert.equal(negotiate(undefined, 'image/avif,image/webp').key, 'avif');
  assert.equal(negotiate(undefined, 'image/avif').acceptsWebp, false);
});

test('result cache: keys differ by account, source, options (v: among them), negotiated format and purge generations', () => {
  const base = { accountId: 'a', source: 's', options: 'w:1', format: 'webp', purges: '0.0' };
  const keys = new Set(
    [
      base,
      { ...base, accountId: 'b' },
      { ...base, source: 't' },
      { ...base, options: 'w:2' },
      { ...base, format: 'avif' },
      { ...base, options: 'w:1/v:2' },
      { ...base, purges: '1.0' },
      { ...base, purges: '0.1' },
    ].map(resultCacheKey),
  );
  assert.equal(keys.size, 8);
});

const result = (bytes: number) => ({
  data: Buffer.alloc(bytes, 7),
  format: 'jpeg' as const,
  width: 1,
  height: 1,
  applied: [],
});

// An entry of result(880) takes 981 bytes on disk (the image plus its header); a 16 000-byte cache holds 16 of them
// (a result over a sixteenth of the cache, 1 000 bytes here, is not kept).
test('result cache: stays within its byte bound, evicting the least recently used first', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-cache-'));
  const cache = openResultCache(dir, 16_000, () => undefined);
  const key = (n: number) =>
    resultCacheKey({ accountId: 'a', source: String(n), options: '', format: 'x', purges: '0.0' });
  for (let n = 1; n <= 16; n++) await cache.getOrProduce(key(n), async () => result(880));
  assert.ok(await cache.get(key(1)), 'key 1 read: now the most recently used');
  await cache.getOrProduce(key(17), async () => result(880));
  assert.ok(cache.bytes <= 16_000);
  assert.equal(await cache.get(key(2)), undefined, 'the least recently used went first');
  assert.ok(await cache.get(key(1)));
  assert.equal(readdirSync(dir).length, 16);
  const reopened = openResultCache(dir, 16_000, () => undefined);
  assert.deepEqual((await reopened.get(key(17)))?.data, result(880).data, 'files survive a restart');
});

test("result cache: one account's misses evict its own results once over its share, never another's within it", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-cache-'));
  const cache = openResultCache(dir, 16_000, () => undefined);
  const key = (accountId: string, n: number) =>
    resultCacheKey({ accountId, source: String(n), options: '', format: 'x', purges: '0.0' });
  for (let n = 1; n <= 5; n++) await cache.getOrProduce(key('b', n), async () => result(880));
  for (let n = 1; n <= 40; n++) await cache.getOrProduce(key('a', n), async () => result(880));
  assert.ok(cache.bytes <= 16_000);
  for (let n = 1; n <= 5; n++) assert.ok(await cache.get(key('b', n)), `b's result ${n} is kept`);
  assert.ok(await cache.get(key('a', 40)), "a's newest result is kept");
  assert.equal(await cache.get(key('a', 1)), undefined, "a's oldest went first");
  const reopened = openResultCache(dir, 16_000, () => undefined);
  for (let n = 1; n <= 25; n++) await reopened.getOrProduce(key('a', 100 + n), async () => result(880));
  for (let n = 1; n <= 5; n++)
    assert.ok(await reopened.get(key('b', n)), `after a restart, b's ${n} is kept`);
});

test('result cache: an account alone may fill it; newcomers within their share take room from the largest', async () => {
  const cache = openResultCache(mkdtempSync(join(tmpdir(), 'imgpipe-cache-')), 16_000, () => undefined);
  const key = (accountId: string, n: number) =>
    resultCacheKey({ accountId, source: String(n), options: '', format: 'x', purges: '0.0' });
  for (let n = 1; n <= 16; n++) await cache.getOrProduce(key('a', n), async () => result(880));
  assert.ok(await cache.get(key('a', 1)), 'a free cache is all one account may use');
  for (let n = 1; n <= 4; n++) await cache.getOrProduce(key('b', n), async () => result(880));
  for (let n = 1; n <= 4; n++) await cache.getOrProduce(key('c', n), async () => result(880));
  assert.ok(cache.bytes <= 16_000);
  for (const owner of ['b', 'c']) {
    for (let n = 1; n <= 4; n++) assert.ok(await cache.get(key(owner, n)), `${owner}'s ${n} is kept`);
  }
  assert.equal(await cache.get(key('a', 2)), undefined, 'the room came from the account over its share');
});

test('result cache: a result over a sixteenth of the cache is answered but not kept', async () => {
  const cache = openResultCache(mkdtempSync(join(tmpdir(), 'imgpipe-cache-')), 16_000, () => undefined);
  const big = await cache.getOrProduce('b'.repeat(64), async () => result(2_000));
  assert.equal(big.result.data.length, 2_000);
  assert.equal(cache.bytes, 0);
  assert.equal(await cache.get('b'.repeat(64)), undefined);
});

test('result cache: concurrent callers of one key share one produce', async () => {
  const cache = openResultCache(mkdtempSync(join(tmpdir(), 'imgpipe-cache-')), 10_000, () => undefined);
  let runs = 0;
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      cache.getOrProduce('k'.repeat(64), async () => {
        runs++;
        await new Promise((r) => setTimeout(r, 20));
        return result(10);
      }),
    ),
  );
  assert.equal(runs, 1);
  assert.equal(answers.filter((a) => a.fresh).length, 1);
});
