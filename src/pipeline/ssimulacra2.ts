// owns: SSIMULACRA 2 (Cloudinary's perceptual metric, 2023 version) in TypeScript, from its published design:
// linear-RGB pyramid of 6 scales, XYB, SSIM' + ringing + blurring maps, L1/L4 norms, 108 weights.

/** An 8-bit sRGB image, channels interleaved (3 = RGB, 4 = RGBA; alpha is blended over grey as the tool does). */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

const SCALES = 6;
const C2 = 0.0009;

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

const EMPTY = new Float32Array(0);

type Planes = [Float32Array, Float32Array, Float32Array];

const newPlanes = (n: number): Planes => [new Float32Array(n), new Float32Array(n), new Float32Array(n)];

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

/**
 * Where a line starts in a padded line buffer: 2·radius zeros before it and room for radius after, so that the
 * filter reads both of its taps without a bounds test (zero outside the image, as the reference).
 */
const LINE_START = 2 * GAUSS.radius;

/** A padded line buffer for lines of exactly `length` samples: the filter reads past a line's end, where only zeros may be. */
const lineBuffer = (length: number) => new Float64Array(length + 3 * GAUSS.radius);

/**
 * The recursive Gaussian along one line held in `line` (from LINE_START, `length` samples), written to `out` at
 * `at`, `at + stride`, … . The first radius − 1 steps only warm the filter up, as in the reference.
 */
function filterLine(line: Float64Array, length: number, out: Float32Array, at: number, stride: number): void {
  const N = GAUSS.radius;
  const [n21, n23, n25] = GAUSS.n2 as [number, number, number];
  const [d11, d13, d15] = GAUSS.d1 as [number, number, number];
  let p1 = 0,
    p3 = 0,
    p5 = 0,
    pp1 = 0,
    pp3 = 0,
    pp5 = 0;
  // Step n reads samples n − N − 1 and n + N − 1, at n + N − 1 and n + 3N − 1 in the buffer.
  for (let n = -N + 1; n < length; n++) {
    const sum = line[n + N - 1]! + line[n + 3 * N - 1]!;
    const o1 = n21 * sum - d11 * p1 - pp1;
    const o3 = n23 * sum - d13 * p3 - pp3;
    const o5 = n25 * sum - d15 * p5 - pp5;
    pp1 = p1;
    pp3 = p3;
    pp5 = p5;
    p1 = o1;
    p3 = o3;
    p5 = o5;
    if (n >= 0) out[at + n * stride] = o1 + o3 + o5;
  }
}

/** Horizontal pass over each row of `src`, or of the product `src`·`times` (blurred squares and products). */
function blurRows(
  src: Float32Array,
  dst: Float32Array,
  w: number,
  h: number,
  line: Float64Array,
  times?: Float32Array,
): void {
  for (let y = 0; y < h; y++) {
    const row = y * w;
    if (times) for (let x = 0; x < w; x++) line[LINE_START + x] = src[row + x]! * times[row + x]!;
    else for (let x = 0; x < w; x++) line[LINE_START + x] = src[row + x]!;
    filterLine(line, w, dst, row, 1);
  }
}

/** Vertical pass, a column at a time through the line buffer (contiguous reads for the filter's two taps). */
function blurColumns(src: Float32Array, dst: Float32Array, w: number, h: number, line: Float64Array): void {
  for (let x = 0; x < w; x++) {
    for (let y = 0, i = x; y < h; y++, i += w) line[LINE_START + y] = src[i]!;
    filterLine(line, h, dst, x, w);
  }
}

/** Scratch buffers of one image size, reused by every blur. */
class Blur {
  private readonly scratch: Scratch;
  constructor(
    readonly w: number,
    readonly h: number,
  ) {
    this.scratch = scratchOf(w, h);
  }
  /** The blur of `src`, or of `src`·`times`. */
  run(
    src: Float32Array,
    out: Float32Array = new Float32Array(this.w * this.h),
    times?: Float32Array,
  ): Float32Array {
    const { blurTmp, rowLine, columnLine } = this.scratch;
    blurRows(src, blurTmp, this.w, this.h, rowLine, times);
    blurColumns(blurTmp, out, this.w, this.h, columnLine);
    return out;
  }
}

/** The distorted side's buffers of one scale: filled completely before they are read, on every score(). */
interface Scratch {
  linear: Planes;
  xyb: Planes;
  s22: Float32Array;
  s12: Float32Array;
  mu2: Float32Array;
  blurTmp: Float32Array;
  /** Line buffers of the blur's two passes: each only ever holds lines of its one length (see lineBuffer). */
  rowLine: Float64Array;
  columnLine: Float64Array;
}

/**
 * Scratch buffers by image size, shared by every reference of that size: the constructor and score() run without
 * yielding, so no two of them use one at the same time, and a quality search stops allocating (and collecting)
 * ten planes per scale per request. A few sizes are kept; a request with a new one starts the cache again.
 */
const SCRATCH = new Map<string, Scratch>();
const SCRATCH_SIZES = 12;

function scratchOf(w: number, h: number): Scratch {
  const key = `${w}x${h}`;
  let s = SCRATCH.get(key);
  if (!s) {
    if (SCRATCH.size >= SCRATCH_SIZES) SCRATCH.clear();
    const n = w * h;
    s = {
      linear: newPlanes(n),
      xyb: newPlanes(n),
      s22: new Float32Array(n),
      s12: new Float32Array(n),
      mu2: new Float32Array(n),
      blurTmp: new Float32Array(n),
      rowLine: lineBuffer(w),
      columnLine: lineBuffer(h),
    };
    SCRATCH.set(key, s);
  }
  return s;
}

interface Linear {
  planes: [Float32Array, Float32Array, Float32Array];
  width: number;
  height: number;
}

function toLinear(img: RgbImage, planes: Planes = newPlanes(img.width * img.height)): Linear {
  const n = img.width * img.height;
  const [r, g, b] = planes;
  const { data, channels } = img;
  if (channels === 3) {
    for (let i = 0, j = 0; i < n; i++, j += 3) {
      r[i] = SRGB_TO_LINEAR[data[j]!]!;
      g[i] = SRGB_TO_LINEAR[data[j + 1]!]!;
      b[i] = SRGB_TO_LINEAR[data[j + 2]!]!;
    }
  } else {
    for (let i = 0, j = 0; i < n; i++, j += channels) {
      const alpha = data[j + 3]! / 255;
      const grey = (1 - alpha) * 0.5;
      r[i] = alpha * SRGB_TO_LINEAR[data[j]!]! + grey;
      g[i] = alpha * SRGB_TO_LINEAR[data[j + 1]!]! + grey;
      b[i] = alpha * SRGB_TO_LINEAR[data[j + 2]!]! + grey;
    }
  }
  return { planes, width: img.width, height: img.height };
}

/** 2×2 box average of one plane (the last column and row repeat when the side is odd). */
function halve(p: Float32Array, out: Float32Array, iw: number, ih: number, w: number, h: number): void {
  const pairs = iw >> 1;
  for (let oy = 0; oy < h; oy++) {
    const r0 = oy * 2 * iw;
    const r1 = Math.min(oy * 2 + 1, ih - 1) * iw;
    const o = oy * w;
    for (let ox = 0; ox < pairs; ox++) {
      const x = ox * 2;
      out[o + ox] = (p[r0 + x]! + p[r0 + x + 1]! + p[r1 + x]! + p[r1 + x + 1]!) * 0.25;
    }
    if (pairs < w) {
      const x = pairs * 2;
      out[o + pairs] = (p[r0 + x]! + p[r0 + x]! + p[r1 + x]! + p[r1 + x]!) * 0.25;
    }
  }
}

function downsample(img: Linear, into?: Planes): Linear {
  const w = Math.ceil(img.width / 2);
  const h = Math.ceil(img.height / 2);
  const planes = into ?? newPlanes(w * h);
  for (let c = 0; c < 3; c++) halve(img.planes[c]!, planes[c]!, img.width, img.height, w, h);
  return { planes, width: w, height: h };
}

const BIAS = 0.0037930732552754493;
const CBRT_BIAS = Math.cbrt(BIAS);

/**
 * Cube root by table with linear interpolation over [0, CBRT_RANGE): the mixed LMS values of in-gamut pixels are
 * at least BIAS, where the interpolation error is below 2e-6; anything above the table falls back to Math.cbrt.
 */
const CBRT_STEPS = 16384;
const CBRT_RANGE = 1.05;
const CBRT_SCALE = CBRT_STEPS / CBRT_RANGE;
const CBRT_TABLE = new Float32Array(CBRT_STEPS + 2);
for (let i = 0; i < CBRT_TABLE.length; i++) CBRT_TABLE[i] = Math.cbrt(i / CBRT_SCALE);

function cbrt(x: number): number {
  if (x <= 0) return 0;
  const at = x * CBRT_SCALE;
  const i = at | 0;
  if (i >= CBRT_STEPS) return Math.cbrt(x);
  const lo = CBRT_TABLE[i]!;
  return lo + (CBRT_TABLE[i + 1]! - lo) * (at - i);
}

/**
 * Linear sRGB → XYB, rescaled as the metric does (X·14+0.42, Y+0.01, B−Y+0.55). `onlyY`: where X and B weigh
 * nothing (the finest scale, the largest), their planes are left as they are and one cube root of three is saved.
 */
function toXyb(img: Linear, out: Planes = newPlanes(img.width * img.height), onlyY = false): Planes {
  const n = img.width * img.height;
  const [r, g, b] = img.planes;
  const [X, Y, B] = out;
  if (onlyY) {
    for (let i = 0; i < n; i++) {
      const ri = r[i]!,
        gi = g[i]!,
        bi = b[i]!;
      const m0 = cbrt(0.3 * ri + 0.622 * gi + 0.078 * bi + BIAS);
      const m1 = cbrt(0.23 * ri + 0.692 * gi + 0.078 * bi + BIAS);
      Y[i] = 0.5 * (m0 + m1) - CBRT_BIAS + 0.01;
    }
    return out;
  }
  for (let i = 0; i < n; i++) {
    const ri = r[i]!,
      gi = g[i]!,
      bi = b[i]!;
    const m0 = cbrt(0.3 * ri + 0.622 * gi + 0.078 * bi + BIAS) - CBRT_BIAS;
    const m1 = cbrt(0.23 * ri + 0.692 * gi + 0.078 * bi + BIAS) - CBRT_BIAS;
    const m2 =
      cbrt(0.2434226892454782 * ri + 0.2047674442449682 * gi + 0.5518098665095535 * bi + BIAS) - CBRT_BIAS;
    const y = 0.5 * (m0 + m1);
    X[i] = 0.5 * (m0 - m1) * 14 + 0.42;
    Y[i] = y + 0.01;
    B[i] = m2 - y + 0.55;
  }
  return out;
}

/** The original's side of one scale: its XYB planes, blurred planes and blurred squares, per channel. */
interface ReferenceScale {
  xyb: Float32Array[];
  mu: Float32Array[];
  sigma: Float32Array[];
  blur: Blur;
  /** Buffers for the distorted side, reused by every score(). */
  work: Scratch;
  /** Per channel: whether its maps weigh anything at this scale (see weighs). */
  counts: boolean[];
}

/**
 * The original's half of the metric, computed once: scoring several candidates against one original (a quality
 * search) then costs only the distorted side.
 */
export class Ssimulacra2Reference {
  readonly width: number;
  readonly height: number;
  private readonly scales: ReferenceScale[] = [];

  constructor(original: RgbImage) {
    this.width = original.width;
    this.height = original.height;
    // The scales first (the reference's rule: stop once the previous one is under 8 pixels), so that their
    // number, which places the weights, is known before any blur.
    // The original's linear planes only live in here: they go in the distorted side's scratch planes.
    const linears: Linear[] = [];
    let lin = toLinear(original, scratchOf(original.width, original.height).linear);
    for (let scale = 0; scale < SCALES; scale++) {
      if (lin.width < 8 || lin.height < 8) break;
      if (scale > 0)
        lin = downsample(lin, scratchOf(Math.ceil(lin.width / 2), Math.ceil(lin.height / 2)).linear);
      linears.push(lin);
    }
    for (const [scale, lin] of linears.entries()) {
      const blur = new Blur(lin.width, lin.height);
      const counts = [0, 1, 2].map((c) => weighs(c, scale, linears.length));
      const n = lin.width * lin.height;
      const onlyY = !counts[0] && !counts[2];
      const xyb = toXyb(lin, onlyY ? [EMPTY, new Float32Array(n), EMPTY] : newPlanes(n), onlyY);
      const mu = xyb.map((plane, c) => (counts[c] ? blur.run(plane) : EMPTY));
      const sigma = xyb.map((plane, c) => (counts[c] ? blur.run(plane, new Float32Array(n), plane) : EMPTY));
      const work = scratchOf(lin.width, lin.height);
      this.scales.push({ xyb, mu, sigma, blur, work, counts });
    }
  }

  /** SSIMULACRA 2 of `distorted` (same size) against this original: 100 identical, 90 visually lossless. */
  score(distorted: RgbImage): number {
    if (distorted.width !== this.width || distorted.height !== this.height) {
      throw new Error('ssimulacra2: images differ in size');
    }
    let lin = toLinear(distorted, this.scales[0]?.work.linear);
    const perScale: number[][][] = [];
    for (const [scale, ref] of this.scales.entries()) {
      if (scale > 0) lin = downsample(lin, ref.work.linear);
      const { blur } = ref;
      const n = blur.w * blur.h;
      const { s22, s12, mu2 } = ref.work;
      const x2 = toXyb(lin, ref.work.xyb, !ref.counts[0] && !ref.counts[2]);
      const channels: number[][] = [];
      for (let c = 0; c < 3; c++) {
        if (!ref.counts[c]) {
          channels.push([0, 0, 0, 0, 0, 0]);
          continue;
        }
        const i1 = ref.xyb[c]!;
        const i2 = x2[c]!;
        blur.run(i2, s22, i2);
        blur.run(i1, s12, i2);
        blur.run(i2, mu2);
        channels.push(mapNorms(n, i1, i2, ref.mu[c]!, mu2, ref.sigma[c]!, s22, s12));
      }
      perScale.push(channels);
    }
    return weightedScore(perScale);
  }
}

/** The L1 and L4 norms of the SSIM', ringing and blurring maps of one channel at one scale. */
function mapNorms(
  n: number,
  i1: Float32Array,
  i2: Float32Array,
  mu1: Float32Array,
  mu2: Float32Array,
  s11: Float32Array,
  s22: Float32Array,
  s12: Float32Array,
): number[] {
  let ssim1 = 0,
    ssim4 = 0,
    ring1 = 0,
    ring4 = 0,
    blur1 = 0,
    blur4 = 0;
  for (let i = 0; i < n; i++) {
    const m1 = mu1[i]!;
    const m2 = mu2[i]!;
    const numM = 1 - (m1 - m2) * (m1 - m2);
    const numS = 2 * (s12[i]! - m1 * m2) + C2;
    const denS = s11[i]! - m1 * m1 + (s22[i]! - m2 * m2) + C2;
    const d = Math.max(0, 1 - (numM * numS) / denS);
    const d2 = d * d;
    ssim1 += d;
    ssim4 += d2 * d2;
    const edge = (1 + Math.abs(i2[i]! - m2)) / (1 + Math.abs(i1[i]! - m1)) - 1;
    const e2 = edge * edge;
    if (edge > 0) {
      ring1 += edge;
      ring4 += e2 * e2;
    } else {
      blur1 -= edge;
      blur4 += e2 * e2;
    }
  }
  return [
    ssim1 / n,
    Math.sqrt(Math.sqrt(ssim4 / n)),
    ring1 / n,
    Math.sqrt(Math.sqrt(ring4 / n)),
    blur1 / n,
    Math.sqrt(Math.sqrt(blur4 / n)),
  ];
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
