// The f:auto recipes of docs/delivery.md and the shipped deploy/nginx.conf put every Accept header in the class the
// server negotiates to: the JavaScript function (Cloudflare, CloudFront), the Fastly expressions and nginx's map
// are run against negotiateFormat for real browsers' headers and the q=0 edge cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { negotiateFormat } from '../../src/delivery/negotiate.ts';

const ACCEPTS = [
  'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8', // Chrome, Edge
  'image/avif,image/webp,*/*', // Firefox
  'image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5', // Safari 17
  'image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5', // Safari 14
  'image/webp,*/*', // older Firefox
  'image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5', // Safari 13
  '*/*',
  '',
  'image/avif;q=0,image/webp', // refuses AVIF
  'image/avif;q=0.0,image/webp;q=0', // refuses both
  'image/avif; q=0.5', // accepts with a low q
  'IMAGE/AVIF',
  'image/webp;q=0.9,image/avif;q=0.1',
];

const expected = (accept: string) => {
  const negotiated = negotiateFormat(accept === '' ? undefined : accept);
  return negotiated === 'legacy' ? 'other' : negotiated;
};

const docs = readFileSync('docs/delivery.md', 'utf8');

test('docs/delivery.md: the JavaScript acceptClass (Cloudflare, CloudFront) agrees with the server for every Accept', () => {
  const block = /```js\n(\/\/ accept-class:[\s\S]*?)```/.exec(docs)?.[1];
  assert.ok(block, 'docs/delivery.md has the accept-class block');
  const { acceptClass, ACCEPT_SENT } = new Function(`${block}; return { acceptClass, ACCEPT_SENT };`)() as {
    acceptClass: (accept: string | null) => string;
    ACCEPT_SENT: Record<string, string>;
  };
  for (const accept of ACCEPTS) assert.equal(acceptClass(accept), expected(accept), accept);
  assert.equal(acceptClass(null), 'other');
  // What is sent for a class negotiates to that class again.
  for (const [cls, sent] of Object.entries(ACCEPT_SENT)) assert.equal(expected(sent), cls);
});

test('docs/delivery.md: the Fastly VCL expressions agree with the server for every Accept', () => {
  const patterns = [...docs.matchAll(/req\.http\.Accept ~ "\(\?i\)([^"]+)"/g)].map(
    (m) => new RegExp(m[1] as string, 'i'),
  );
  assert.equal(patterns.length, 2);
  const sent = [...docs.matchAll(/set req\.http\.Accept = "([^"]+)";/g)].map((m) => m[1] as string);
  assert.equal(sent.length, 3);
  const [avif, webp] = patterns as [RegExp, RegExp];
  for (const accept of ACCEPTS) {
    const cls = avif.test(accept) ? 'avif' : webp.test(accept) ? 'webp' : 'other';
    assert.equal(cls, expected(accept), accept);
  }
  assert.deepEqual(sent.map(expected), ['avif', 'webp', 'other']);
});

test("deploy/nginx.conf: the Accept class map agrees with the server, and each class's Accept sent negotiates to it", () => {
  const conf = readFileSync('deploy/nginx.conf', 'utf8');
  const map = /map \$http_accept \$imgpipe_accept_class \{([\s\S]*?)\n\}/.exec(conf)?.[1] ?? '';
  const entries = [...map.matchAll(/"~\*([^"]+)" (\w+);/g)].map((m) => ({
    pattern: new RegExp(m[1] as string, 'i'),
    cls: m[2] as string,
  }));
  assert.deepEqual(
    entries.map((e) => e.cls),
    ['avif', 'webp'],
  );
  assert.match(map, /default other;/);
  for (const accept of ACCEPTS) {
    // nginx takes the first regular expression that matches, in the order written.
    const cls = entries.find((e) => e.pattern.test(accept))?.cls ?? 'other';
    assert.equal(cls, expected(accept), accept);
  }
  const sentMap = /map \$imgpipe_accept_class \$imgpipe_accept_sent \{([\s\S]*?)\n\}/.exec(conf)?.[1] ?? '';
  const sent = Object.fromEntries([...sentMap.matchAll(/(\w+) "([^"]+)";/g)].map((m) => [m[1], m[2]]));
  assert.deepEqual(
    Object.entries(sent).map(([cls, accept]) => [
      cls === 'default' ? 'other' : cls,
      expected(accept as string),
    ]),
    [
      ['avif', 'avif'],
      ['webp', 'webp'],
      ['other', 'other'],
    ],
  );
});
