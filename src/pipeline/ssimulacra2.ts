// owns: SSIMULACRA 2 (Cloudinary's perceptual metric, 2023 version), from its published design: linear-RGB pyramid
// of 6 scales, XYB, SSIM' + ringing + blurring maps, L1/L4 norms, 108 weights. The per-pixel loops run in
// WebAssembly with 128-bit SIMD (src/pipeline/assembly/ssimulacra2.ts: float32 as in the reference tool, but for the
// blur's recursion, which runs in float64); this module holds the metric's structure, its constants and the wasm
// memory's buffers.
import { WASM_BASE64 } from './generated/ssimulacra2-wasm.ts';

/** An 8-bit sRGB image, channels interleaved (3 = RGB, 4 = RGBA; alpha is blended over grey as the tool does). */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

const SCALES = 6;

/** The metric's published weights: channel (X, Y, B) × scale × norm (1, 4) × map (ssim, ringing, blur). */
const WEIGHTS = [
  0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
  1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
  1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
  1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
  0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
  0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
  0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
  225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
  176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0, 0.0,
  34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0008680556573291698, 0.0,
  0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0, 0.0, 0.0, 0.0,
  0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0, 8.826982764996862,
  23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493,
  171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
];

/**
 * Below this weight a map's norms (0…~1) move the weighted sum by under 0.002 each: X and B at the finest scale,
 * B at the next two and all of the coarsest have only such weights, so their blurs are skipped (half the cost).
 */
const NEGLIGIBLE_WEIGHT = 0.002;

/** Whether channel `c` at `scale` (of `scales`) has a weight that counts, indexed as weightedScore reads them. */
function weighs(c: number, scale: number, scales: number): boolean {
  const at = (c * scales + scale) * 6;
  return WEIGHTS.slice(at, at + 6).some((w) => w >= NEGLIGIBLE_WEIGHT);
}

const SRGB_TO_LINEAR = new Float32Array(256);
for (let i = 0; i < 256; i++) {
  const v = i / 255;
  SRGB_TO_LINEAR[i] = v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
}

/** The recursive Gaussian (Charalampidis 2016) of sigma 1.5 that the reference uses, zero outside the image. */
const GAUSS = (() => {
  const sigma = 1.5;
  const radius = Math.round(3.2795 * sigma + 0.2546);
  const piDiv2r = Math.PI / (2 * radius);
  const omega = [piDiv2r, 3 * piDiv2r, 5 * piDiv2r];
  const p1 = 1 / Math.tan(0.5 * omega[0]!);
  const p3 = -1 / Math.tan(0.5 * omega[1]!);
  const p5 = 1 / Math.tan(0.5 * omega[2]!);
  const r1 = (p1 * p1) / Math.sin(omega[0]!);
  const r3 = (-p3 * p3) / Math.sin(omega[1]!);
  const r5 = (p5 * p5) / Math.sin(omega[2]!);
  const rho = omega.map((w) => Math.exp(-0.5 * sigma * sigma * w * w) / radius);
  const d13 = p1 * r3 - r1 * p3;
  const d35 = p3 * r5 - r3 * p5;
  const d51 = p5 * r1 - r5 * p1;
  const zeta15 = d35 / d13;
  const zeta35 = d51 / d13;
  const a = invert3x3([p1, p3, p5, r1, r3, r5, zeta15, zeta35, 1]);
  const gamma = [1, radius * radius - sigma * sigma, zeta15 * rho[0]! + zeta35 * rho[1]! + rho[2]!];
  const beta = [0, 1, 2].map(
    (row) => a[row * 3]! * gamma[0]! + a[row * 3 + 1]! * gamma[1]! + a[row * 3 + 2]! * gamma[2]!,
  );
  return {
    radius,
    n2: beta.map((b, i) => -b * Math.cos(omega[i]! * (radius + 1))),
    d1: omega.map((w) => -2 * Math.cos(w)),
  };
})();

function invert3x3(m: number[]): number[] {
  const [a, b, c, d, e, f, g, h, i] = m as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  return [
    (e * i - f * h) / det,
    (c * h - b * i) / det,
    (b * f - c * e) / det,
    (f * g - d * i) / det,
    (a * i - c * g) / det,
    (c * d - a * f) / det,
    (d * h - e * g) / det,
    (b * g - a * h) / det,
    (a * e - b * d) / det,
  ];
}

/** The wasm module's exports (src/pipeline/assembly/ssimulacra2.ts): byte offsets into `memory`, sizes in pixels. */
interface Kernels {
  memory: WebAssembly.Memory;
  setGauss(
    radius: number,
    n21: number,
    n23: number,
    n25: number,
    d11: number,
    d13: number,
    d15: number,
  ): void;
  toLinear(src: number, n: number, channels: number, table: number, r: number, g: number, b: number): void;
  halve(p: number, out: number, iw: number, ih: number, w: number, h: number): void;
  toXyb(r: number, g: number, b: number, X: number, Y: number, B: number, n: number, onlyY: number): void;
  blurPass(src: number, times: number, dst: number, w: number, h: number, line: number, block: number): void;
  mapNorms(
    i1: number,
    i2: number,
    mu1: number,
    mu2: number,
    s11: number,
    s22: number,
    s12: number,
    w: number,
    h: number,
    out: number,
  ): void;
}

/**
 * The memory's layout: the first page is the module's own (it keeps nothing there), then the sRGB table, the blur's
 * 4×4 transpose block, the six sums mapNorms writes, and from ARENA on the planes, placed by `alloc`.
 */
const PAGE = 65536;
const TABLE = PAGE;
const BLOCK = TABLE + 256 * 4;
const NORMS = BLOCK + 64;
const ARENA = PAGE + 2048;

let kernels: Kernels | undefined;
let top = ARENA;
let heap = new Float32Array(0);

/**
 * The module, instantiated on first use (synchronously: it is a few kilobytes). Its bytes are embedded in
 * ./generated/ssimulacra2-wasm.ts, which bin/build.js compiles from the AssemblyScript source (`npm ci` runs it as
 * "prepare"; `npm run build` after an edit of the source): a TypeScript module, so tsx (tests, the sources) and
 * esbuild (dist/, what Docker ships) both take it like any other import, and no .wasm file has to be found at run
 * time. It is git-ignored, a build artifact.
 */
function wasm(): Kernels {
  if (kernels) return kernels;
  const module = new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64'));
  const k = new WebAssembly.Instance(module).exports as unknown as Kernels;
  const [n21, n23, n25] = GAUSS.n2 as [number, number, number];
  const [d11, d13, d15] = GAUSS.d1 as [number, number, number];
  k.setGauss(GAUSS.radius, n21, n23, n25, d11, d13, d15);
  kernels = k;
  f32().set(SRGB_TO_LINEAR, TABLE / 4);
  return k;
}

/** A float32 view of the whole memory, anew after it grew. */
function f32(): Float32Array {
  const { buffer } = kernels!.memory;
  if (heap.buffer !== buffer) heap = new Float32Array(buffer);
  return heap;
}

/** `bytes` (a multiple of 16) from the arena, growing the memory as needed. */
function alloc(bytes: number): number {
  const at = top;
  top += bytes;
  const { memory } = kernels!;
  if (top > memory.buffer.byteLength) memory.grow(Math.ceil((top - memory.buffer.byteLength) / PAGE));
  return at;
}

/** Bytes of a w×h plane, rounded up to whole vectors of four (toXyb writes the last one whole). */
const planeBytes = (w: number, h: number) => ((w * h + 3) >> 2) << 4;

/** Bytes of the blur's line for both passes of a w×h plane: four float64 a sample, 3·radius rows of padding. */
const lineBytes = (w: number, h: number) => (Math.max(w, h) + 3 * GAUSS.radius) * 32;

/**
 * The distorted side's buffers of one scale size, shared by every reference of that size: the constructor and
 * score() run without yielding, so no two of them use one at the same time. Filled completely before they are read.
 */
interface Scratch {
  /** Linear R, G, B (also the original's, while a reference is made). */
  linear: [number, number, number];
  xyb: [number, number, number];
  mu2: number;
  s22: number;
  s12: number;
  /** The first blur pass's output (transposed). */
  tmp: number;
  /** The blur's line of four columns in float64, padded with zeros (see blurPass), for either pass. */
  line: number;
  /** The 8-bit pixels of an image of this size, when it is the finest scale (4 bytes a pixel, so RGBA fits). */
  input: number;
}

/**
 * Where a reference's planes of one scale live: per channel that counts, its XYB, blurred XYB and blurred square,
 * one after another. A slot holds one reference's at a time; a size has two (format "auto" scores against two
 * references in turn), and a third reference of the size takes the least recently used. A reference that finds its
 * slots taken (or dropped, see SCRATCH) computes its planes again from its copy of the original: rare, and cheaper
 * than copying every reference's planes out of the memory in case it happens.
 */
interface Slot {
  at: number;
  owner: Ssimulacra2Reference | undefined;
  used: number;
}

const SLOTS_PER_SIZE = 2;

/**
 * Buffers by size (and slots by size and plane count). A few sizes are kept: when a call needs a new one and that
 * would pass either limit, everything is dropped and the arena starts again. A wasm memory never shrinks, so the
 * byte limit bounds what it keeps: 64 MiB, or one call's needs when more (a 110 592-pixel sample takes about 11 MiB,
 * a whole 1200×800 image, as bench/quality.ts judges, about 95).
 */
const SCRATCH = new Map<string, Scratch>();
const SLOTS = new Map<string, Slot[]>();
const SCRATCH_SIZES = 12;
const ARENA_BYTES = 64 * 1024 * 1024;
let clock = 0;

function newScratch(w: number, h: number): Scratch {
  const p = planeBytes(w, h);
  const plane = () => alloc(p);
  return {
    linear: [plane(), plane(), plane()],
    xyb: [plane(), plane(), plane()],
    mu2: plane(),
    s22: plane(),
    s12: plane(),
    tmp: plane(),
    line: alloc(lineBytes(w, h)),
    input: alloc(p),
  };
}

/** One scale's geometry: its size and the channels whose maps count there (see weighs). */
interface Scale {
  w: number;
  h: number;
  counts: [boolean, boolean, boolean];
  /** The channels that count, in slot order. */
  channels: number[];
}

/** Bytes a slot of `scale` takes: three planes per channel that counts. */
const slotBytes = (s: Scale) => 3 * s.channels.length * planeBytes(s.w, s.h);
const sizeKey = (s: Scale) => `${s.w}x${s.h}`;
const slotKey = (s: Scale) => `${s.w}x${s.h}/${s.channels.length}`;

/**
 * Every buffer one call (a constructor or a score()) uses, found or placed before it computes anything, so that
 * nothing it uses moves or is dropped on the way.
 */
function buffersFor(scales: Scale[], owner: Ssimulacra2Reference): { scratch: Scratch; slot: Slot }[] {
  const missing = scales.reduce(
    (bytes, s) =>
      bytes +
      (SCRATCH.has(sizeKey(s)) ? 0 : 11 * planeBytes(s.w, s.h) + lineBytes(s.w, s.h)) +
      ((SLOTS.get(slotKey(s))?.length ?? 0) < SLOTS_PER_SIZE ? slotBytes(s) : 0),
    0,
  );
  const newSizes = scales.filter((s) => !SCRATCH.has(sizeKey(s))).length;
  if (missing > 0 && (top - ARENA + missing > ARENA_BYTES || SCRATCH.size + newSizes > SCRATCH_SIZES)) {
    SCRATCH.clear();
    SLOTS.clear();
    top = ARENA;
  }
  return scales.map((s) => {
    let scratch = SCRATCH.get(sizeKey(s));
    if (!scratch) SCRATCH.set(sizeKey(s), (scratch = newScratch(s.w, s.h)));
    let slots = SLOTS.get(slotKey(s));
    if (!slots) SLOTS.set(slotKey(s), (slots = []));
    let slot = slots.find((candidate) => candidate.owner === owner);
    if (!slot && slots.length < SLOTS_PER_SIZE) {
      slots.push((slot = { at: alloc(slotBytes(s)), owner: undefined, used: 0 }));
    }
    slot ??= slots.reduce((a, b) => (a.used <= b.used ? a : b));
    slot.used = ++clock;
    return { scratch, slot };
  });
}

/** The blur of the plane at `src` (or of its product with the plane at `times`) into `out`: down, then across. */
function blur(k: Kernels, scratch: Scratch, w: number, h: number, src: number, out: number, times = 0): void {
  k.blurPass(src, times, scratch.tmp, w, h, scratch.line, BLOCK);
  k.blurPass(scratch.tmp, 0, out, h, w, scratch.line, BLOCK);
}

/** The 8-bit pixels into the finest scale's input buffer, then to its linear planes. */
function toLinear(k: Kernels, img: RgbImage, scratch: Scratch): void {
  const { data, width, height, channels } = img;
  if (channels !== 3 && channels !== 4) throw new Error(`ssimulacra2: ${channels} channels`);
  new Uint8Array(k.memory.buffer, scratch.input, width * height * channels).set(
    data.subarray(0, width * height * channels),
  );
  const [r, g, b] = scratch.linear;
  k.toLinear(scratch.input, width * height, channels, TABLE, r, g, b);
}

/** The next scale's linear planes, halved from this one's. */
function downsample(k: Kernels, from: Scratch, fromScale: Scale, to: Scratch, toScale: Scale): void {
  for (let c = 0; c < 3; c++) {
    k.halve(from.linear[c]!, to.linear[c]!, fromScale.w, fromScale.h, toScale.w, toScale.h);
  }
}

/**
 * The original's half of the metric, computed once: scoring several candidates against one original (a quality
 * search) then costs only the distorted side. Each reference has its own planes (see Slot): several can be used in
 * turn.
 */
export class Ssimulacra2Reference {
  readonly width: number;
  readonly height: number;
  private readonly scales: Scale[] = [];
  /** A copy of the original's pixels, from which the planes are computed again if their slots were taken. */
  private readonly original: RgbImage;

  constructor(original: RgbImage) {
    this.width = original.width;
    this.height = original.height;
    const { width, height, channels } = original;
    // A copy (new Uint8Array of a view copies; a Buffer's slice() would not).
    const data = new Uint8Array(original.data.subarray(0, width * height * channels));
    this.original = { data, width, height, channels };
    // The scales first (the reference's rule: stop once the previous one is under 8 pixels, so the last may be
    // smaller), so that their number, which places the weights, is known before anything is computed.
    const sizes: [number, number][] = [];
    for (let w = width, h = height; sizes.length < SCALES;) {
      if (w < 8 || h < 8) break;
      sizes.push(sizes.length === 0 ? [w, h] : [(w = Math.ceil(w / 2)), (h = Math.ceil(h / 2))]);
    }
    for (const [scale, [w, h]] of sizes.entries()) {
      const counts = [0, 1, 2].map((c) => weighs(c, scale, sizes.length)) as Scale['counts'];
      this.scales.push({ w, h, counts, channels: [0, 1, 2].filter((c) => counts[c]) });
    }
    this.fill(wasm(), buffersFor(this.scales, this));
  }

  /** The original's planes into `buffers`' slots, which this reference then owns. */
  private fill(k: Kernels, buffers: { scratch: Scratch; slot: Slot }[]): void {
    if (buffers.length > 0) toLinear(k, this.original, buffers[0]!.scratch);
    for (const [i, s] of this.scales.entries()) {
      const { scratch, slot } = buffers[i]!;
      if (i > 0) downsample(k, buffers[i - 1]!.scratch, this.scales[i - 1]!, scratch, s);
      const p = planeBytes(s.w, s.h);
      // Each channel that counts goes straight into the slot; the others (when X or B count) into scratch.
      const xyb = scratch.xyb.map((plane, c) => {
        const j = s.channels.indexOf(c);
        return j < 0 ? plane : slot.at + 3 * j * p;
      });
      const [r, g, b] = scratch.linear;
      k.toXyb(r, g, b, xyb[0]!, xyb[1]!, xyb[2]!, s.w * s.h, s.counts[0] || s.counts[2] ? 0 : 1);
      for (const [j, c] of s.channels.entries()) {
        const plane = xyb[c]!;
        blur(k, scratch, s.w, s.h, plane, slot.at + (3 * j + 1) * p);
        blur(k, scratch, s.w, s.h, plane, slot.at + (3 * j + 2) * p, plane);
      }
      slot.owner = this;
    }
  }

  /** SSIMULACRA 2 of `distorted` (same size) against this original: 100 identical, 90 visually lossless. */
  score(distorted: RgbImage): number {
    if (distorted.width !== this.width || distorted.height !== this.height) {
      throw new Error('ssimulacra2: images differ in size');
    }
    const k = wasm();
    const buffers = buffersFor(this.scales, this);
    // Before the distorted side: computing them uses the scratch buffers too.
    if (buffers.some(({ slot }) => slot.owner !== this)) this.fill(k, buffers);
    if (buffers.length > 0) toLinear(k, distorted, buffers[0]!.scratch);
    const perScale: number[][][] = [];
    for (const [i, s] of this.scales.entries()) {
      const { scratch, slot } = buffers[i]!;
      if (i > 0) downsample(k, buffers[i - 1]!.scratch, this.scales[i - 1]!, scratch, s);
      const [r, g, b] = scratch.linear;
      const [X, Y, B] = scratch.xyb;
      k.toXyb(r, g, b, X, Y, B, s.w * s.h, s.counts[0] || s.counts[2] ? 0 : 1);
      const p = planeBytes(s.w, s.h);
      const n = s.w * s.h;
      const channels: number[][] = [];
      for (let c = 0; c < 3; c++) {
        const j = s.channels.indexOf(c);
        if (j < 0) {
          channels.push([0, 0, 0, 0, 0, 0]);
          continue;
        }
        const i1 = slot.at + 3 * j * p;
        const i2 = scratch.xyb[c]!;
        blur(k, scratch, s.w, s.h, i2, scratch.s22, i2);
        blur(k, scratch, s.w, s.h, i1, scratch.s12, i2);
        blur(k, scratch, s.w, s.h, i2, scratch.mu2);
        k.mapNorms(i1, i2, i1 + p, scratch.mu2, i1 + 2 * p, scratch.s22, scratch.s12, s.w, s.h, NORMS);
        const [ssim1, ssim4, ring1, ring4, blur1, blur4] = new Float64Array(k.memory.buffer, NORMS, 6);
        channels.push([
          ssim1! / n,
          Math.sqrt(Math.sqrt(ssim4! / n)),
          ring1! / n,
          Math.sqrt(Math.sqrt(ring4! / n)),
          blur1! / n,
          Math.sqrt(Math.sqrt(blur4! / n)),
        ]);
      }
      perScale.push(channels);
    }
    return weightedScore(perScale);
  }
}

/** SSIMULACRA 2 of `distorted` against `original` (same size): 100 identical, 90 visually lossless, 70 high. */
export function ssimulacra2(original: RgbImage, distorted: RgbImage): number {
  return new Ssimulacra2Reference(original).score(distorted);
}

/** The weighted sum of the norms (weights in channel, scale, norm, map order) and the metric's final curve. */
function weightedScore(perScale: number[][][]): number {
  let sum = 0;
  let i = 0;
  for (let c = 0; c < 3; c++) {
    for (let s = 0; s < perScale.length; s++) {
      const m = perScale[s]![c]!;
      for (let norm = 0; norm < 2; norm++) {
        sum += WEIGHTS[i++]! * Math.abs(m[norm]!);
        sum += WEIGHTS[i++]! * Math.abs(m[2 + norm]!);
        sum += WEIGHTS[i++]! * Math.abs(m[4 + norm]!);
      }
    }
  }
  let score = sum * 0.9562382616834844;
  score =
    2.326765642916932 * score - 0.020884521182843837 * score * score + 6.248496625763138e-5 * score ** 3;
  return score > 0 ? 100 - 10 * Math.pow(score, 0.6276336467831387) : 100;
}
