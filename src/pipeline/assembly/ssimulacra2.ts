// owns: the hot loops of SSIMULACRA 2 (src/pipeline/ssimulacra2.ts), in AssemblyScript compiled to WebAssembly with
// 128-bit SIMD by bin/build-wasm.js (not TypeScript: tsconfig, eslint and prettier leave this folder out).
// Planes are float32, row-major, at byte offsets into the one memory that ssimulacra2.ts manages (it grows it and
// places every buffer); these functions allocate nothing. Arithmetic is float32 as in the reference tool (highway),
// but for the blur's recursion: its three resonators (poles on the unit circle) carry float32 rounding along a
// whole line, and the blurred squares then lose most of their variance (E[x²] − μ², against C2 = 0.0009) to it.
// Measured: float32 state put scores up to 0.8 under the float64 JS port this replaced (q92 JPEG samples; the tool
// agreed with the port within 0.13); float64 state (two lanes a vector) keeps them within 0.007 (BENCHMARKS.md at 3059197).

/** The recursive Gaussian's coefficients (GAUSS in ssimulacra2.ts), set once by setGauss before any blur. */
let N: i32 = 0;
let N21: f64 = 0;
let N23: f64 = 0;
let N25: f64 = 0;
let D11: f64 = 0;
let D13: f64 = 0;
let D15: f64 = 0;

export function setGauss(radius: i32, n21: f64, n23: f64, n25: f64, d11: f64, d13: f64, d15: f64): void {
  N = radius;
  N21 = n21;
  N23 = n23;
  N25 = n25;
  D11 = d11;
  D13 = d13;
  D15 = d15;
}

/**
 * 8-bit sRGB, `channels` interleaved (3, or 4 with alpha blended over grey), to three linear planes through the
 * 256-entry float32 table at `table`.
 */
export function toLinear(
  src: usize,
  n: i32,
  channels: i32,
  table: usize,
  r: usize,
  g: usize,
  b: usize,
): void {
  if (channels == 3) {
    for (let i = 0; i < n; i++) {
      const j = src + <usize>(i * 3);
      const o = <usize>(i << 2);
      store<f32>(r + o, load<f32>(table + ((<usize>load<u8>(j)) << 2)));
      store<f32>(g + o, load<f32>(table + ((<usize>load<u8>(j + 1)) << 2)));
      store<f32>(b + o, load<f32>(table + ((<usize>load<u8>(j + 2)) << 2)));
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    const j = src + <usize>(i * channels);
    const o = <usize>(i << 2);
    // In float64 as the JS port did: near-transparent pixels are a small term on a large grey.
    const alpha = <f64>load<u8>(j + 3) / 255;
    const grey = (1 - alpha) * 0.5;
    store<f32>(r + o, <f32>(alpha * <f64>load<f32>(table + ((<usize>load<u8>(j)) << 2)) + grey));
    store<f32>(g + o, <f32>(alpha * <f64>load<f32>(table + ((<usize>load<u8>(j + 1)) << 2)) + grey));
    store<f32>(b + o, <f32>(alpha * <f64>load<f32>(table + ((<usize>load<u8>(j + 2)) << 2)) + grey));
  }
}

/** 2×2 box average of one iw×ih plane into w×h (the last column and row repeat when a side is odd). */
export function halve(p: usize, out: usize, iw: i32, ih: i32, w: i32, h: i32): void {
  const pairs = iw >> 1;
  const quarter = f32x4.splat(0.25);
  for (let oy = 0; oy < h; oy++) {
    const r0 = p + ((<usize>(oy * 2 * iw)) << 2);
    const r1 = p + ((<usize>(min(oy * 2 + 1, ih - 1) * iw)) << 2);
    const o = out + ((<usize>(oy * w)) << 2);
    let ox = 0;
    // Four outputs from eight columns of both rows: sum the rows, then add neighbouring lanes.
    for (; ox + 4 <= pairs; ox += 4) {
      const at = <usize>(ox << 3);
      const lo = f32x4.add(v128.load(r0 + at), v128.load(r1 + at));
      const hi = f32x4.add(v128.load(r0 + at, 16), v128.load(r1 + at, 16));
      const even = v128.shuffle<f32>(lo, hi, 0, 2, 4, 6);
      const odd = v128.shuffle<f32>(lo, hi, 1, 3, 5, 7);
      v128.store(o + ((<usize>ox) << 2), f32x4.mul(f32x4.add(even, odd), quarter));
    }
    for (; ox < pairs; ox++) {
      const x = <usize>(ox << 3);
      const s = load<f32>(r0 + x) + load<f32>(r0 + x + 4) + (load<f32>(r1 + x) + load<f32>(r1 + x + 4));
      store<f32>(o + ((<usize>ox) << 2), s * 0.25);
    }
    if (pairs < w) {
      const x = <usize>(pairs << 3);
      const a = load<f32>(r0 + x);
      const c = load<f32>(r1 + x);
      store<f32>(o + ((<usize>pairs) << 2), (a + a + c + c) * 0.25);
    }
  }
}

const BIAS: f32 = 0.0037930732552754493;

/** Cube roots of four positive values: a guess from the exponent bits (a third of them), then two Halley steps. */
// @ts-ignore: decorator
@inline
function cbrt4(x: v128): v128 {
  const third = f32x4.mul(f32x4.convert_i32x4_s(x), f32x4.splat(<f32>(1.0 / 3.0)));
  let y = i32x4.add(i32x4.trunc_sat_f32x4_s(third), i32x4.splat(709921077));
  for (let k = 0; k < 2; k++) {
    const y3 = f32x4.mul(f32x4.mul(y, y), y);
    y = f32x4.mul(y, f32x4.div(f32x4.add(y3, f32x4.add(x, x)), f32x4.add(f32x4.add(y3, y3), x)));
  }
  return y;
}

/**
 * Linear planes (n values each, padded to a multiple of 4) to XYB, rescaled as the metric does (X·14+0.42,
 * Y+0.01, B−Y+0.55). `onlyY`: X and B weigh nothing at this scale; only Y is written.
 */
export function toXyb(r: usize, g: usize, b: usize, X: usize, Y: usize, B: usize, n: i32, onlyY: bool): void {
  const bias = f32x4.splat(BIAS);
  const cbrtBias = f32x4.splat(Mathf.cbrt(BIAS));
  const half = f32x4.splat(0.5);
  const yOffset = f32x4.splat(0.01);
  const end = <usize>(((n + 3) >> 2) << 4);
  for (let o: usize = 0; o < end; o += 16) {
    const ri = v128.load(r + o);
    const gi = v128.load(g + o);
    const bi = v128.load(b + o);
    const bb = f32x4.mul(bi, f32x4.splat(0.078));
    const l0 = f32x4.add(
      f32x4.add(f32x4.add(f32x4.mul(ri, f32x4.splat(0.3)), f32x4.mul(gi, f32x4.splat(0.622))), bb),
      bias,
    );
    const l1 = f32x4.add(
      f32x4.add(f32x4.add(f32x4.mul(ri, f32x4.splat(0.23)), f32x4.mul(gi, f32x4.splat(0.692))), bb),
      bias,
    );
    const m0 = f32x4.sub(cbrt4(l0), cbrtBias);
    const m1 = f32x4.sub(cbrt4(l1), cbrtBias);
    const y = f32x4.mul(half, f32x4.add(m0, m1));
    v128.store(Y + o, f32x4.add(y, yOffset));
    if (onlyY) continue;
    const l2 = f32x4.add(
      f32x4.add(
        f32x4.add(
          f32x4.mul(ri, f32x4.splat(<f32>0.2434226892454782)),
          f32x4.mul(gi, f32x4.splat(<f32>0.2047674442449682)),
        ),
        f32x4.mul(bi, f32x4.splat(<f32>0.5518098665095535)),
      ),
      bias,
    );
    const m2 = f32x4.sub(cbrt4(l2), cbrtBias);
    v128.store(
      X + o,
      f32x4.add(f32x4.mul(f32x4.mul(half, f32x4.sub(m0, m1)), f32x4.splat(14)), f32x4.splat(0.42)),
    );
    v128.store(B + o, f32x4.add(f32x4.sub(m2, y), f32x4.splat(0.55)));
  }
}

/**
 * One pass of the recursive Gaussian (Charalampidis 2016, zero outside the image) down the columns of a W×H plane
 * at `src` (or of its product with the plane at `times`, unless that is 0), four adjacent columns at a time,
 * written transposed to `dst` (H×W: dst[x·H + y]). Two passes, the second on the first's output, blur both ways
 * and leave the result the right way round. The first N − 1 steps only warm the filter up, as in the reference.
 * `line` holds (H + 3N) × 32 bytes: the four columns' samples in float64 with N·2 rows of zeros before them and N
 * after, so that the recursion reads its two taps without a bounds test; `block` 64 bytes for the transpose.
 */
export function blurPass(
  src: usize,
  times: usize,
  dst: usize,
  W: i32,
  H: i32,
  line: usize,
  block: usize,
): void {
  const n21 = f64x2.splat(N21);
  const n23 = f64x2.splat(N23);
  const n25 = f64x2.splat(N25);
  const d11 = f64x2.splat(D11);
  const d13 = f64x2.splat(D13);
  const d15 = f64x2.splat(D15);
  const zero = f64x2.splat(0);
  const rowBytes = (<usize>W) << 2;
  const dstRow = (<usize>H) << 2;
  const data = line + ((<usize>(2 * N)) << 5);
  for (let at: usize = 0; at < (<usize>(2 * N)) << 5; at += 16) v128.store(line + at, zero);
  for (let at = (<usize>H) << 5; at < (<usize>(H + N)) << 5; at += 16) v128.store(data + at, zero);
  // The last group of four columns overlaps the one before when W is not a multiple of 4: the same values again.
  for (let x0 = 0; x0 < W; x0 += 4) {
    if (x0 > W - 4) x0 = W - 4;
    let from = src + ((<usize>x0) << 2);
    if (times) {
      let by = times + ((<usize>x0) << 2);
      for (let at: usize = 0; at < (<usize>H) << 5; at += 32, from += rowBytes, by += rowBytes) {
        const v = f32x4.mul(v128.load(from), v128.load(by));
        v128.store(data + at, f64x2.promote_low_f32x4(v));
        v128.store(data + at, f64x2.promote_low_f32x4(v128.shuffle<f32>(v, v, 2, 3, 0, 1)), 16);
      }
    } else {
      for (let at: usize = 0; at < (<usize>H) << 5; at += 32, from += rowBytes) {
        const v = v128.load(from);
        v128.store(data + at, f64x2.promote_low_f32x4(v));
        v128.store(data + at, f64x2.promote_low_f32x4(v128.shuffle<f32>(v, v, 2, 3, 0, 1)), 16);
      }
    }
    // Two lanes of float64 per vector: columns x0, x0 + 1 (p…) and x0 + 2, x0 + 3 (q…).
    let p1 = zero,
      p3 = zero,
      p5 = zero,
      pp1 = zero,
      pp3 = zero,
      pp5 = zero;
    let q1 = zero,
      q3 = zero,
      q5 = zero,
      qq1 = zero,
      qq3 = zero,
      qq5 = zero;
    // Step n reads rows n − N − 1 and n + N − 1: line rows n + N − 1 and n + 3N − 1. The term of the step before
    // comes last, so that the chain from one step to the next is a multiply and a subtraction.
    let lo = line + ((<usize>(1 - N + N - 1)) << 5);
    const gap = (<usize>(2 * N)) << 5;
    for (let n = -N + 1; n < H; n++, lo += 32) {
      const sa = f64x2.add(v128.load(lo), v128.load(lo + gap));
      const sb = f64x2.add(v128.load(lo, 16), v128.load(lo + gap, 16));
      const o1 = f64x2.sub(f64x2.sub(f64x2.mul(n21, sa), pp1), f64x2.mul(d11, p1));
      const o3 = f64x2.sub(f64x2.sub(f64x2.mul(n23, sa), pp3), f64x2.mul(d13, p3));
      const o5 = f64x2.sub(f64x2.sub(f64x2.mul(n25, sa), pp5), f64x2.mul(d15, p5));
      const r1 = f64x2.sub(f64x2.sub(f64x2.mul(n21, sb), qq1), f64x2.mul(d11, q1));
      const r3 = f64x2.sub(f64x2.sub(f64x2.mul(n23, sb), qq3), f64x2.mul(d13, q3));
      const r5 = f64x2.sub(f64x2.sub(f64x2.mul(n25, sb), qq5), f64x2.mul(d15, q5));
      pp1 = p1;
      pp3 = p3;
      pp5 = p5;
      p1 = o1;
      p3 = o3;
      p5 = o5;
      qq1 = q1;
      qq3 = q3;
      qq5 = q5;
      q1 = r1;
      q3 = r3;
      q5 = r5;
      if (n < 0) continue;
      const outA = f32x4.demote_f64x2_zero(f64x2.add(f64x2.add(o1, o3), o5));
      const outB = f32x4.demote_f64x2_zero(f64x2.add(f64x2.add(r1, r3), r5));
      // Four rows of output gather in `block`, then go out as four columns of dst (a 4×4 transpose).
      const k = n & 3;
      v128.store(block + ((<usize>k) << 4), v128.shuffle<f32>(outA, outB, 0, 1, 4, 5));
      if (k == 3) {
        const a = v128.load(block);
        const b = v128.load(block, 16);
        const c = v128.load(block, 32);
        const d = v128.load(block, 48);
        const t0 = v128.shuffle<f32>(a, b, 0, 4, 1, 5);
        const t1 = v128.shuffle<f32>(a, b, 2, 6, 3, 7);
        const t2 = v128.shuffle<f32>(c, d, 0, 4, 1, 5);
        const t3 = v128.shuffle<f32>(c, d, 2, 6, 3, 7);
        const out = dst + <usize>x0 * dstRow + ((<usize>(n - 3)) << 2);
        v128.store(out, v128.shuffle<f32>(t0, t2, 0, 1, 4, 5));
        v128.store(out + dstRow, v128.shuffle<f32>(t0, t2, 2, 3, 6, 7));
        v128.store(out + 2 * dstRow, v128.shuffle<f32>(t1, t3, 0, 1, 4, 5));
        v128.store(out + 3 * dstRow, v128.shuffle<f32>(t1, t3, 2, 3, 6, 7));
      }
    }
    // The last H mod 4 rows, one value at a time.
    for (let n = H & ~3; n < H; n++) {
      const row = block + ((<usize>(n & 3)) << 4);
      const out = dst + <usize>x0 * dstRow + ((<usize>n) << 2);
      for (let lane = 0; lane < 4; lane++) {
        store<f32>(out + <usize>lane * dstRow, load<f32>(row + ((<usize>lane) << 2)));
      }
    }
  }
}

const C2: f32 = 0.0009;

/**
 * The L1 and L4 norms' sums of the SSIM', ringing and blurring maps of one channel at one scale (w×h), as six f64
 * at `out`: ssim, ssim⁴, ringing, ringing⁴, blurring, blurring⁴. Float32 per pixel, each row's sums in float64.
 */
export function mapNorms(
  i1: usize,
  i2: usize,
  mu1: usize,
  mu2: usize,
  s11: usize,
  s22: usize,
  s12: usize,
  w: i32,
  h: i32,
  out: usize,
): void {
  const one = f32x4.splat(1);
  const two = f32x4.splat(2);
  const c2 = f32x4.splat(C2);
  const zero = f32x4.splat(0);
  let ssim1: f64 = 0,
    ssim4: f64 = 0,
    ring1: f64 = 0,
    ring4: f64 = 0,
    blur1: f64 = 0,
    blur4: f64 = 0;
  const vectors = w & ~3;
  for (let y = 0; y < h; y++) {
    let vs1 = zero,
      vs4 = zero,
      vr1 = zero,
      vr4 = zero,
      vb1 = zero,
      vb4 = zero;
    const row = (<usize>(y * w)) << 2;
    for (let x = 0; x < vectors; x += 4) {
      const o = row + ((<usize>x) << 2);
      const m1 = v128.load(mu1 + o);
      const m2 = v128.load(mu2 + o);
      const diff = f32x4.sub(m1, m2);
      const numM = f32x4.sub(one, f32x4.mul(diff, diff));
      const numS = f32x4.add(f32x4.mul(two, f32x4.sub(v128.load(s12 + o), f32x4.mul(m1, m2))), c2);
      const denS = f32x4.add(
        f32x4.add(
          f32x4.sub(v128.load(s11 + o), f32x4.mul(m1, m1)),
          f32x4.sub(v128.load(s22 + o), f32x4.mul(m2, m2)),
        ),
        c2,
      );
      const d = f32x4.max(zero, f32x4.sub(one, f32x4.div(f32x4.mul(numM, numS), denS)));
      const d2 = f32x4.mul(d, d);
      vs1 = f32x4.add(vs1, d);
      vs4 = f32x4.add(vs4, f32x4.mul(d2, d2));
      const edge = f32x4.sub(
        f32x4.div(
          f32x4.add(one, f32x4.abs(f32x4.sub(v128.load(i2 + o), m2))),
          f32x4.add(one, f32x4.abs(f32x4.sub(v128.load(i1 + o), m1))),
        ),
        one,
      );
      const ring = f32x4.max(edge, zero);
      const blur = f32x4.max(f32x4.neg(edge), zero);
      const r2 = f32x4.mul(ring, ring);
      const b2 = f32x4.mul(blur, blur);
      vr1 = f32x4.add(vr1, ring);
      vr4 = f32x4.add(vr4, f32x4.mul(r2, r2));
      vb1 = f32x4.add(vb1, blur);
      vb4 = f32x4.add(vb4, f32x4.mul(b2, b2));
    }
    ssim1 += sum4(vs1);
    ssim4 += sum4(vs4);
    ring1 += sum4(vr1);
    ring4 += sum4(vr4);
    blur1 += sum4(vb1);
    blur4 += sum4(vb4);
    for (let x = vectors; x < w; x++) {
      const o = row + ((<usize>x) << 2);
      const m1 = load<f32>(mu1 + o);
      const m2 = load<f32>(mu2 + o);
      const numM: f32 = 1 - (m1 - m2) * (m1 - m2);
      const numS: f32 = 2 * (load<f32>(s12 + o) - m1 * m2) + C2;
      const denS: f32 = load<f32>(s11 + o) - m1 * m1 + (load<f32>(s22 + o) - m2 * m2) + C2;
      const d = max<f32>(0, 1 - (numM * numS) / denS);
      const d2 = d * d;
      ssim1 += d;
      ssim4 += d2 * d2;
      const edge: f32 = (1 + abs<f32>(load<f32>(i2 + o) - m2)) / (1 + abs<f32>(load<f32>(i1 + o) - m1)) - 1;
      const e2 = edge * edge;
      if (edge > 0) {
        ring1 += edge;
        ring4 += e2 * e2;
      } else {
        blur1 -= edge;
        blur4 += e2 * e2;
      }
    }
  }
  store<f64>(out, ssim1);
  store<f64>(out, ssim4, 8);
  store<f64>(out, ring1, 16);
  store<f64>(out, ring4, 24);
  store<f64>(out, blur1, 32);
  store<f64>(out, blur4, 40);
}

/** The four lanes' sum, in float64. */
// @ts-ignore: decorator
@inline
function sum4(v: v128): f64 {
  const pairs = f64x2.add(
    f64x2.promote_low_f32x4(v),
    f64x2.promote_low_f32x4(v128.shuffle<f32>(v, v, 2, 3, 0, 1)),
  );
  return f64x2.extract_lane(pairs, 0) + f64x2.extract_lane(pairs, 1);
}
