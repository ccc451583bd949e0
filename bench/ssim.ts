// SSIM over greyscale pixels (Wang et al. 2004), on 8x8 windows every 4 pixels: enough to rank encoder settings.
const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;
const WINDOW = 8;
const STEP = 4;

/** Mean SSIM of two greyscale images of the same size (1 = identical). */
export function ssim(a: Uint8Array, b: Uint8Array, width: number, height: number): number {
  if (a.length !== width * height || b.length !== width * height) throw new Error('ssim: sizes differ');
  let total = 0;
  let windows = 0;
  const n = WINDOW * WINDOW;
  for (let y = 0; y + WINDOW <= height; y += STEP) {
    for (let x = 0; x + WINDOW <= width; x += STEP) {
      let sa = 0;
      let sb = 0;
      let saa = 0;
      let sbb = 0;
      let sab = 0;
      for (let dy = 0; dy < WINDOW; dy++) {
        let i = (y + dy) * width + x;
        for (let dx = 0; dx < WINDOW; dx++, i++) {
          const va = a[i] as number;
          const vb = b[i] as number;
          sa += va;
          sb += vb;
          saa += va * va;
          sbb += vb * vb;
          sab += va * vb;
        }
      }
      const ma = sa / n;
      const mb = sb / n;
      const va = saa / n - ma * ma;
      const vb = sbb / n - mb * mb;
      const cov = sab / n - ma * mb;
      total += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
      windows++;
    }
  }
  return total / windows;
}
