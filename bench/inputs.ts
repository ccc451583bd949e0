// owns: the benchmark's input images: a real photograph from a Debian package, or a seeded synthetic stand-in.
import { existsSync, readFileSync } from 'node:fs';
import sharp from 'sharp';

/**
 * Real photographs of at least 3000x2000 shipped by Debian packages, best first. The files are GPL-2+, so the
 * repository never holds them: `apt-get install mate-backgrounds` puts them on the machine and the bench
 * derives its inputs from them at run time.
 */
const DEBIAN_PHOTOS = [
  {
    path: '/usr/share/backgrounds/mate/abstract/Elephants_5640x3172.jpg',
    what: 'Elephants_5640x3172.jpg (mate-backgrounds)',
  },
];

export interface BaseImage {
  description: string;
  /** Decodable by sharp, at least 3000x2000. */
  data: Buffer;
  synthetic: boolean;
}

/** mulberry32: a small seeded PRNG, so the synthetic image is the same on every machine. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A 4000x2667 picture that compresses like a photograph: smooth colour fields, soft-edged shapes, a slight
 * blur as from a lens, then sensor-like noise. A flat or purely random image would make every encoder
 * unrealistically fast or slow.
 */
export async function syntheticPhoto(seed = 8, width = 4000, height = 2667): Promise<Buffer> {
  const random = seededRandom(seed);
  const px = new Uint8Array(width * height * 3);
  const waves = Array.from({ length: 3 }, () => [random() * 6, random() * 6, random() * 6, random() * 6]);
  const shapes = Array.from({ length: 90 }, () => ({
    cx: random() * width,
    cy: random() * height,
    rx: 20 + random() * width * 0.12,
    ry: 20 + random() * height * 0.12,
    rgb: [random() * 255, random() * 255, random() * 255],
    opacity: 0.3 + random() * 0.6,
  }));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const u = x / width;
      const v = y / height;
      const i = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) {
        const [a, b, p, q] = waves[c] as number[];
        px[i + c] = 128 + 60 * Math.sin(a! * u + p!) + 50 * Math.cos(b! * v + q!);
      }
    }
  }
  for (const s of shapes) {
    const x0 = Math.max(0, Math.floor(s.cx - s.rx));
    const x1 = Math.min(width, Math.ceil(s.cx + s.rx));
    const y0 = Math.max(0, Math.floor(s.cy - s.ry));
    const y1 = Math.min(height, Math.ceil(s.cy + s.ry));
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) {
        const d = ((x - s.cx) / s.rx) ** 2 + ((y - s.cy) / s.ry) ** 2;
        if (d >= 1) continue;
        const k = s.opacity * Math.min(1, (1 - d) * 4);
        const i = (y * width + x) * 3;
        for (let c = 0; c < 3; c++) px[i + c] = px[i + c]! * (1 - k) + s.rgb[c]! * k;
      }
    }
  }
  const blurred = await sharp(px, { raw: { width, height, channels: 3 } })
    .blur(1.2)
    .raw()
    .toBuffer();
  for (let i = 0; i < blurred.length; i++) {
    const noise = (random() + random() + random() - 1.5) * 12;
    blurred[i] = Math.max(0, Math.min(255, blurred[i]! + noise));
  }
  return sharp(blurred, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
}

export async function loadBaseImage(forceSynthetic: boolean): Promise<BaseImage> {
  const photo = forceSynthetic ? undefined : DEBIAN_PHOTOS.find((p) => existsSync(p.path));
  if (photo) return { description: photo.what, data: readFileSync(photo.path), synthetic: false };
  return {
    description: 'the seeded synthetic photograph (no Debian photo installed; see bench/README.md)',
    data: await syntheticPhoto(),
    synthetic: true,
  };
}

/** The base cropped and scaled to width x height, as a camera-like JPEG (q90 unless told, 4:2:0). */
export async function jpegOfSize(base: Buffer, width: number, height: number, quality = 90): Promise<Buffer> {
  return sharp(base, { limitInputPixels: false })
    .resize(width, height, { fit: 'cover' })
    .jpeg({ quality })
    .toBuffer();
}

/** Width and height of a 3:2 image of about `megapixels` million pixels (never above it). */
export function sizeForMegapixels(megapixels: number): { width: number; height: number } {
  const width = Math.floor(Math.sqrt((megapixels * 1e6 * 3) / 2));
  return { width, height: Math.floor((width * 2) / 3) };
}

/** A 1000x1000 RGBA PNG: the photo under an alpha mask (opaque centre, soft fade, transparent corners). */
export async function alphaPng(base: Buffer): Promise<Buffer> {
  const size = 1000;
  const rgb = await sharp(base).resize(size, size, { fit: 'cover' }).removeAlpha().raw().toBuffer();
  const mask = Buffer.alloc(size * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const d = Math.hypot(x - size / 2, y - size / 2) / (size / 2);
      mask[y * size + x] = Math.round(255 * Math.max(0, Math.min(1, (1.05 - d) * 3)));
    }
  }
  return sharp(rgb, { raw: { width: size, height: size, channels: 3 } })
    .joinChannel(mask, { raw: { width: size, height: size, channels: 1 } })
    .png()
    .toBuffer();
}
