// The perceptual parts of quality "auto" without a server: the SSIMULACRA 2 port, the level names, the sample, the search.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  JPEG_WEBP_SAMPLE,
  parseAutoQuality,
  QUALITY_LEVELS,
  SAMPLE,
  samplePixels,
  searchQuality,
  type QualityModel,
  type ScoredSample,
} from '../../src/pipeline/auto-quality.ts';
import { ssimulacra2, type RgbImage } from '../../src/pipeline/ssimulacra2.ts';

/** A 96x80 picture (ramp, waves, checks) and a blocky distortion of it, `strength` levels per 4x4 block. */
function syntheticPair(strength: number): [RgbImage, RgbImage] {
  const width = 96;
  const height = 80;
  const a = new Uint8Array(width * height * 3);
  const b = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      a[i] = (x * 2 + y) % 256;
      a[i + 1] = 128 + 100 * Math.sin(x / 7) * Math.cos(y / 9);
      a[i + 2] = ((x >> 3) + (y >> 3)) % 2 ? 200 : 40;
      for (let c = 0; c < 3; c++) {
        const block = (((x >> 2) * 31 + (y >> 2) * 17 + c * 7) % 9) - 4;
        b[i + c] = Math.max(0, Math.min(255, a[i + c]! + block * strength));
      }
    }
  }
  return [
    { data: a, width, height, channels: 3 },
    { data: b, width, height, channels: 3 },
  ];
}

// Scores printed by Cloudinary's ssimulacra2 tool for the same pairs written as PNG.
const REFERENCE_TOOL_SCORES = [
  [1, 87.99964515],
  [2, 77.1796294],
  [3, 66.43603028],
] as const;

for (const [strength, expected] of REFERENCE_TOOL_SCORES) {
  test(`ssimulacra2 agrees with the reference tool within 0.1 (distortion ${strength})`, () => {
    const [a, b] = syntheticPair(strength);
    const score = ssimulacra2(a, b);
    assert.ok(Math.abs(score - expected) < 0.1, `${score} against ${expected}`);
  });
}

test('ssimulacra2 of an image against itself is 100', () => {
  const [a] = syntheticPair(1);
  assert.equal(ssimulacra2(a, a), 100);
});

test('parseAutoQuality: named levels, a numeric target within bounds, nothing else', () => {
  assert.deepEqual(parseAutoQuality('auto'), { level: 'auto', target: QUALITY_LEVELS.auto });
  assert.deepEqual(parseAutoQuality('auto:high'), { level: 'high', target: QUALITY_LEVELS.high });
  assert.deepEqual(parseAutoQuality('auto:eco'), { level: 'eco', target: QUALITY_LEVELS.eco });
  assert.deepEqual(parseAutoQuality('auto:75'), { level: '75', target: 75 });
  assert.deepEqual(parseAutoQuality('auto:81.5'), { level: '81.5', target: 81.5 });
  for (const bad of ['auto:', 'auto:best', 'auto:20', 'auto:99', 'AUTO', 'auto:80:1', 'eco', '80']) {
    assert.equal(parseAutoQuality(bad), undefined, bad);
  }
});

test('samplePixels keeps a small image whole', () => {
  const [a] = syntheticPair(1);
  assert.equal(samplePixels(a), a);
});

test('samplePixels of a large image is a mosaic of 16-aligned tiles copied from it', () => {
  const width = 1200;
  const height = 800;
  // Each pixel spells its own position, so a sample pixel tells where it came from.
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      data.set([x & 255, y & 255, (x >> 8) | ((y >> 8) << 4)], (y * width + x) * 3);
    }
  }
  const sample = samplePixels({ data, width, height, channels: 3 });
  assert.ok(sample.width * sample.height < (width * height) / 5);
  const origin = (i: number) => {
    const [lx, ly, hi] = [sample.data[i * 3]!, sample.data[i * 3 + 1]!, sample.data[i * 3 + 2]!];
    return { x: lx | ((hi & 15) << 8), y: ly | ((hi >> 4) << 8) };
  };
  const first = origin(0);
  assert.equal(first.x % 16, 0);
  assert.equal(first.y % 16, 0);
  // Pixels inside a tile keep their neighbours: one step right in the sample is one step right in the image.
  assert.deepEqual(origin(1), { x: first.x + 1, y: first.y });
  assert.deepEqual(origin(sample.width), { x: first.x, y: first.y + 1 });
});

test('samplePixels takes the shape asked for: JPEG_WEBP_SAMPLE is four tiles of 128 px, SAMPLE three of 192', () => {
  const width = 1200;
  const height = 800;
  const data = new Uint8Array(width * height * 3);
  for (const [shape, w, h] of [
    [JPEG_WEBP_SAMPLE, 4 * 128, 128],
    [SAMPLE, 3 * 192, 192],
  ] as const) {
    const sample = samplePixels({ data, width, height, channels: 3 }, shape);
    assert.deepEqual([sample.width, sample.height], [w, h]);
  }
});

/** A stand-in encoder whose score is a known line of the quality: the search must find its crossing. */
function linearScores(scoreAt: (q: number) => number): {
  sample: ScoredSample;
  codec: (s: RgbImage, q: number) => Promise<RgbImage>;
  probes: number[];
} {
  const probes: number[] = [];
  const image: RgbImage = { data: new Uint8Array(3), width: 1, height: 1, channels: 3 };
  return {
    probes,
    sample: { image, score: (d) => scoreAt(d.data[0]!) },
    codec: async (_s, q) => {
      probes.push(q);
      return { data: Uint8Array.of(q, 0, 0), width: 1, height: 1, channels: 3 };
    },
  };
}

const MODEL: QualityModel = { start: () => 80, slope: 0.5, min: 10, max: 100 };

test('searchQuality finds the lowest quality reaching the target in at most 3 encodes', async () => {
  const { sample, codec, probes } = linearScores((q) => 40 + 0.6 * q);
  const found = await searchQuality(sample, 76, MODEL, codec);
  assert.equal(found.quality, 60);
  assert.ok(probes.length <= 3, `${probes.length} encodes`);
});

test('searchQuality stops at the model maximum when the target is out of reach', async () => {
  const { sample, codec } = linearScores((q) => 20 + 0.5 * q);
  const found = await searchQuality(sample, 90, MODEL, codec);
  assert.equal(found.quality, 100);
});

test('searchQuality stops after one encode when it lands within the tolerance, stepping along the model slope', async () => {
  // The model starts at 80, where this line scores 87.5: 1.5 above a target of 86, within a tolerance of 2.
  const { sample, codec, probes } = linearScores((q) => 47.5 + 0.5 * q);
  const found = await searchQuality(sample, 86, MODEL, codec, 3, 2);
  assert.deepEqual(probes, [80]);
  assert.equal(found.quality, 77);
});

test('searchQuality keeps probing when the first encode lands beyond the tolerance', async () => {
  const { sample, codec, probes } = linearScores((q) => 40 + 0.6 * q);
  const found = await searchQuality(sample, 76, MODEL, codec, 3, 2);
  assert.ok(probes.length > 1, `${probes.length} encodes`);
  assert.equal(found.quality, 60);
});

test('samplePixels takes flat and busy tiles as the image has them, not only where a grid falls', () => {
  // Left third flat grey, the rest noise: a sample of busy tiles only would overrate a flat-sky photograph.
  const width = 1152;
  const height = 768;
  const data = new Uint8Array(width * height * 3);
  let seed = 1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      data.fill(x < width / 3 ? 128 : seed >>> 24, (y * width + x) * 3, (y * width + x) * 3 + 3);
    }
  }
  const sample = samplePixels({ data, width, height, channels: 3 });
  const flatTiles = [0, 1, 2].filter((k) => {
    const at = (row: number, col: number) => sample.data[(row * sample.width + k * 192 + col) * 3]!;
    return at(0, 0) === 128 && at(100, 100) === 128 && at(191, 191) === 128;
  });
  assert.equal(sample.height, 192);
  assert.equal(flatTiles.length, 1, 'one of three tiles flat, as a third of the image is');
});
