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

/** The chunks of a RIFF WebP after its 12-byte header, as [fourcc, whole chunk bytes]. */
function webpChunks(webp: Buffer): [string, Buffer][] {
  const chunks: [string, Buffer][] = [];
  for (let at = 12; at + 8 <= webp.length;) {
    const length = webp.readUInt32LE(at + 4);
    const end = at + 8 + length + (length & 1);
    chunks.push([webp.toString('latin1', at, at + 4), webp.subarray(at, end)]);
    at = end;
  }
  return chunks;
}

/**
 * An animated WebP of `frames` 2×1 frames on a `canvas`×`canvas` canvas (at least 2), about 50 bytes a frame (a real
 * frame of libwebp's, repeated). libwebp's demuxer takes time quadratic in the frames to read its header: the frames must be
 * counted before any libvips call.
 */
export async function webpFrameBomb(frames: number, canvas = 2): Promise<Buffer> {
  const tiny = await animatedImage('webp', { width: 2, height: 1, frames: 2, delay: 10, loop: 0 });
  const chunks = webpChunks(tiny);
  const vp8x = Buffer.from(chunks.find(([id]) => id === 'VP8X')![1]);
  vp8x.writeUIntLE(canvas - 1, 12, 3);
  vp8x.writeUIntLE(canvas - 1, 15, 3);
  const anim = chunks.find(([id]) => id === 'ANIM')![1];
  const frame = chunks.find(([id]) => id === 'ANMF')![1];
  const body = Buffer.concat([
    Buffer.from('WEBP', 'latin1'),
    vp8x,
    anim,
    ...Array<Buffer>(frames).fill(frame),
  ]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

/**
 * An animated GIF whose logical screen descriptor says `screen`×`screen` while its `frames` frames are each
 * `side`×`side`: the decoder grows the screen to the frames, so the screen descriptor must not decide anything.
 */
export async function lyingGif(side: number, screen: number, frames = 2): Promise<Buffer> {
  const gif = await animatedImage('gif', { width: side, height: side, frames, delay: 50, loop: 0 });
  gif.writeUInt16LE(screen, 6);
  gif.writeUInt16LE(screen, 8);
  return gif;
}

/**
 * An animated GIF of `frames` frames of `side`×`side` pseudo-random pixels (a random 16-colour palette), written
 * here without compression (a clear code every 14 literals keeps LZW at 5 bits), so a noise animation of many
 * megapixels takes a moment to make and seconds to encode. `screen`: the logical screen descriptor's side (default
 * `side`; smaller makes a lying GIF).
 */
export function noiseGif(side: number, frames: number, screen = side): Buffer {
  let seed = 0x9e3779b9;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed >>> 24;
  };
  const head = Buffer.alloc(13);
  head.write('GIF89a', 0, 'latin1');
  head.writeUInt16LE(screen, 6);
  head.writeUInt16LE(screen, 8);
  head[10] = 0xf3; // a global colour table of 16 entries
  const palette = Buffer.from(Array.from({ length: 48 }, random));
  const loop = Buffer.from([0x21, 0xff, 0x0b, ...Buffer.from('NETSCAPE2.0'), 0x03, 0x01, 0x00, 0x00, 0x00]);
  const parts = [head, palette, loop];
  const CLEAR = 16;
  const END = 17;
  for (let f = 0; f < frames; f++) {
    const descriptor = Buffer.alloc(10);
    descriptor[0] = 0x2c;
    descriptor.writeUInt16LE(side, 5);
    descriptor.writeUInt16LE(side, 7);
    parts.push(Buffer.from([0x21, 0xf9, 0x04, 0x00, 0x0a, 0x00, 0x00, 0x00]), descriptor, Buffer.from([4]));
    const codes = Buffer.alloc(Math.ceil((side * side * 15) / 14 + 2) + 8);
    let bits = 0;
    let acc = 0;
    let length = 0;
    const put = (code: number) => {
      acc |= code << bits;
      bits += 5;
      if (bits >= 8) {
        codes[length++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    };
    for (let i = 0; i < side * side; i++) {
      if (i % 14 === 0) put(CLEAR);
      put(random() & 15);
    }
    put(END);
    if (bits > 0) codes[length++] = acc & 0xff;
    // Data sub-blocks of at most 255 bytes, each after its length byte, then the terminator.
    const blocks = Buffer.alloc(length + Math.ceil(length / 255) + 1);
    let at = 0;
    for (let from = 0; from < length; from += 255) {
      const n = Math.min(255, length - from);
      blocks[at++] = n;
      codes.copy(blocks, at, from, from + n);
      at += n;
    }
    parts.push(blocks);
  }
  parts.push(Buffer.from([0x3b]));
  return Buffer.concat(parts);
}
