// A delivery derivative is keyed by the output it produces: defaults left out, equivalent spellings one key, w, h and
// dpr reduced to what the source allows (src/delivery/output-key.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalColour, outputOperations, outputOptions } from '../../src/delivery/output-key.ts';
import { parseDeliveryRequest } from '../../src/delivery/url.ts';
import { operationsSchema } from '../../src/pipeline/operations.ts';
import { predictedSize } from '../../src/pipeline/registry.ts';

const schema = operationsSchema(10_000);
const SOURCE = encodeURIComponent('https://images.example.com/photo.jpg');
const WIDE = { width: 600, height: 400 };

/** The key options of a URL's option segments over a source of `size`. */
function keyOf(options: string, size: { width: number; height: number } | 'unknown' = WIDE): string {
  const request = parseDeliveryRequest(`${options ? `${options}/` : ''}${SOURCE}`, schema);
  const known = size === 'unknown' ? undefined : size;
  return outputOptions(outputOperations(request.operations, known), request.version, request.placeholder);
}

test('output key: options equal to their defaults are left out', () => {
  assert.equal(keyOf('w:300/fit:inside/dpr:1/q:80/strip:true/gray:false/placeholder:false'), keyOf('w:300'));
  assert.equal(keyOf('w:300/h:300/fit:cover/pos:center'), keyOf('w:300/h:300/fit:cover'));
  assert.equal(keyOf('fit:inside/w:300', 'unknown'), keyOf('w:300', 'unknown'));
});

test('output key: equivalent spellings are one key (order, leading zeros, decimals, colours)', () => {
  assert.equal(keyOf('f:webp/w:300/q:70'), keyOf('q:070/w:300/f:webp'));
  assert.equal(keyOf('w:150/dpr:2.0'), keyOf('w:150/dpr:2'));
  assert.equal(keyOf('pad:4/bg:FFF'), keyOf('pad:4/bg:ffffff'));
  assert.equal(keyOf('pad:4/bg:ffffffff'), keyOf('pad:4/bg:fff'));
  assert.equal(canonicalColour('#AbC'), '#aabbcc');
  assert.equal(canonicalColour('#11223380'), '#11223380');
});

test('output key: every width at or above the source width is the source itself, one key', () => {
  const keys = [640, 750, 828, 1080, 1200, 1920, 2048, 3840].map((w) => keyOf(`w:${w}/f:auto`));
  assert.deepEqual(new Set(keys), new Set([keyOf('w:600/f:auto')]));
  assert.equal(keyOf('h:900/fit:cover'), keyOf('w:600'));
  assert.equal(keyOf('w:2000/h:2000'), keyOf('w:600'));
  assert.equal(keyOf('h:400'), keyOf('w:600'));
  assert.notEqual(keyOf('w:599'), keyOf('w:600'));
});

test('output key: dpr is folded into the box it multiplies', () => {
  assert.equal(keyOf('w:200/dpr:2'), keyOf('w:400'));
  assert.equal(keyOf('w:400/dpr:2'), keyOf('w:600'), '800 px asked of a 600 px source');
  assert.equal(keyOf('w:100/h:50/fit:cover/dpr:3'), keyOf('w:300/h:150/fit:cover'));
});

test('output key: a cover, contain or fill box is reduced to the box it produces', () => {
  // 1000×1000 over 600×400 never enlarges: cover makes 400×400, contain too.
  assert.equal(keyOf('w:1000/h:1000/fit:cover'), keyOf('w:400/h:400/fit:cover'));
  assert.equal(keyOf('w:1000/h:1000/fit:contain/pos:0.2,0.8'), keyOf('w:400/h:400/fit:contain/pos:0.2,0.8'));
  assert.equal(keyOf('w:900/h:300/fit:fill'), keyOf('w:600/h:300/fit:fill'));
  assert.notEqual(keyOf('w:400/h:400/fit:cover'), keyOf('w:400/h:400/fit:contain'));
});

test('output key: the size the resize receives is the one after crop and rotate', () => {
  assert.equal(keyOf('crop:0,0,300,200/w:500'), keyOf('crop:0,0,300,200/w:300'));
  assert.equal(keyOf('rot:90/h:900'), keyOf('rot:90/w:400'), 'turned, the source is 400×600');
  assert.notEqual(keyOf('rot:90/w:300'), keyOf('rot:90/w:400'));
});

test('output key: without the source size (not learnt, or trim ahead) only the spelling is reduced', () => {
  assert.notEqual(keyOf('w:3840', 'unknown'), keyOf('w:600', 'unknown'));
  assert.equal(keyOf('w:3840/fit:inside', 'unknown'), keyOf('w:3840', 'unknown'));
  assert.notEqual(keyOf('trim:true/w:3840'), keyOf('trim:true/w:600'));
});

test('output key: a reduced resize produces the same size and fit as the one written', () => {
  const sources = [WIDE, { width: 401, height: 999 }, { width: 37, height: 23 }];
  const fits = ['inside', 'outside', 'cover', 'contain', 'fill'] as const;
  const sides = [undefined, 1, 20, 300, 399, 401, 600, 1000, 4000];
  for (const source of sources) {
    for (const fit of fits) {
      for (const w of sides) {
        for (const h of sides) {
          for (const dpr of [1, 1.5, 3]) {
            if (w === undefined && h === undefined) continue;
            const ops = { resize: { w, h, fit, dpr } };
            const reduced = outputOperations(ops, source);
            const label = JSON.stringify({ source, ops, reduced });
            assert.deepEqual(predictedSize(source, reduced), predictedSize(source, ops), label);
            const box = reduced.resize;
            if (box?.w && box.h && w !== undefined && h !== undefined)
              assert.equal(box.fit ?? 'inside', fit, label);
          }
        }
      }
    }
  }
});

test('output key: placeholder:image and placeholder:json are keys of their own', () => {
  const keys = [
    keyOf('w:300'),
    keyOf('w:300/placeholder:true'),
    keyOf('w:300/placeholder:image'),
    keyOf('w:300/placeholder:json'),
  ];
  assert.equal(new Set(keys).size, 4);
});
