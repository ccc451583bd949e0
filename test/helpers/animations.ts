// Animated test inputs made with sharp (GIF and WebP, each frame a different colour), and a GIF frame bomb.
import sharp from 'sharp';

export interface AnimationSpec {
  width: number;
  height: number;
  frames: number;
  /** Milliseconds per frame. */
  delay: number;
  /** 0 = forever. */
  loop: number;
}

/** Frame i is a solid colour with a white square that moves right, so no two consecutive frames are equal. */
async function frameImages(spec: AnimationSpec): Promise<Buffer[]> {
  const frames: Buffer[] = [];
  const square = Math.max(1, Math.floor(spec.height / 4));
  for (let i = 0; i < spec.frames; i++) {
    const hue = Math.round((i * 255) / spec.frames);
    frames.push(
      await sharp({
        create: {
          width: spec.width,
          height: spec.height,
          channels: 3,
          background: { r: hue, g: 80, b: 255 - hue },
        },
      })
        .composite([
          {
            input: { create: { width: square, height: square, channels: 3, background: '#fff' } },
            left: Math.floor(((spec.width - square) * i) / Math.max(1, spec.frames - 1)),
            top: Math.floor((spec.height - square) / 2),
          },
        ])
        .png()
        .toBuffer(),
    );
  }
  return frames;
}

export async function animatedImage(format: 'gif' | 'webp', spec: AnimationSpec): Promise<Buffer> {
  const joined = sharp(await frameImages(spec), { join: { animated: true } });
  const timing = { delay: Array(spec.frames).fill(spec.delay), loop: spec.loop };
  return format === 'gif'
    ? joined.gif(timing).toBuffer()
    : joined.webp({ ...timing, quality: 90 }).toBuffer();
}

/**
 * A GIF of `frames` 1×1 frames on a `screen`×`screen` canvas, about 20 bytes a frame: a few kilobytes that decode
 * to screen² × frames pixels. It must be refused from the header, before any frame is decoded.
 */
export function gifFrameBomb(frames: number, screen: number): Buffer {
  const head = Buffer.alloc(13);
  head.write('GIF89a', 0, 'latin1');
  head.writeUInt16LE(screen, 6);
  head.writeUInt16LE(screen, 8);
  head[10] = 0x80; // a global colour table of 2 entries
  const palette = Buffer.from([0, 0, 0, 255, 255, 255]);
  const loop = Buffer.from([0x21, 0xff, 0x0b, ...Buffer.from('NETSCAPE2.0'), 0x03, 0x01, 0x00, 0x00, 0x00]);
  const frame = Buffer.from([
    // Graphic control extension: 10 ms.
    0x21, 0xf9, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00,
    // Image descriptor: a 1×1 frame at 0,0.
    0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
    // LZW minimum code size 2; codes clear, 0, end in 3 bits each; block terminator.
    0x02, 0x02, 0x44, 0x01, 0x00,
  ]);
  return Buffer.concat([head, palette, loop, ...Array<Buffer>(frames).fill(frame), Buffer.from([0x3b])]);
}
