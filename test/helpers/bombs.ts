// Decompression bombs made in the test: tiny TIFF and WebP files whose headers declare huge dimensions.
// (The PNG, JPEG, GIF and AVIF bombs are files in test/fixtures/corpus.)

/** A little-endian baseline TIFF declaring `width`×`height` 8-bit grey pixels, with only a few bytes of data. */
export function tiffBomb(width: number, height: number): Buffer {
  const SHORT = 3;
  const LONG = 4;
  // Tags must be sorted by number; every value fits in the 4-byte value field.
  const entries: [tag: number, type: number, value: number][] = [
    [256, LONG, width], // ImageWidth
    [257, LONG, height], // ImageLength
    [258, SHORT, 8], // BitsPerSample
    [259, SHORT, 1], // Compression: none
    [262, SHORT, 1], // PhotometricInterpretation: BlackIsZero
    [273, LONG, 0], // StripOffsets (patched below)
    [277, SHORT, 1], // SamplesPerPixel
    [278, LONG, height], // RowsPerStrip: one strip
    [279, LONG, 16], // StripByteCounts: far fewer bytes than declared
  ];
  const ifdOffset = 8;
  const ifdSize = 2 + entries.length * 12 + 4;
  const dataOffset = ifdOffset + ifdSize;
  const buf = Buffer.alloc(dataOffset + 16, 0x80);
  buf.write('II', 0, 'latin1');
  buf.writeUInt16LE(42, 2);
  buf.writeUInt32LE(ifdOffset, 4);
  buf.writeUInt16LE(entries.length, ifdOffset);
  entries.forEach(([tag, type, value], i) => {
    const at = ifdOffset + 2 + i * 12;
    buf.writeUInt16LE(tag, at);
    buf.writeUInt16LE(type, at + 2);
    buf.writeUInt32LE(1, at + 4);
    buf.writeUInt32LE(0, at + 8);
    const v = tag === 273 ? dataOffset : value;
    if (type === SHORT) buf.writeUInt16LE(v, at + 8);
    else buf.writeUInt32LE(v, at + 8);
  });
  buf.writeUInt32LE(0, ifdOffset + 2 + entries.length * 12); // no next IFD
  return buf;
}

function riffChunk(fourcc: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(fourcc, 0, 'latin1');
  head.writeUInt32LE(payload.length, 4);
  const pad = payload.length % 2 === 1 ? Buffer.alloc(1) : Buffer.alloc(0);
  return Buffer.concat([head, payload, pad]);
}

function riffWebp(chunks: Buffer[]): Buffer {
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), ...chunks]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

/** A VP8L (lossless) bitstream header declaring `width`×`height` (each ≤ 16383, the WebP maximum), followed by a little garbage. */
function vp8lPayload(width: number, height: number): Buffer {
  const payload = Buffer.alloc(5 + 32, 0);
  payload[0] = 0x2f; // VP8L signature
  // 14 bits width-1, 14 bits height-1, 1 bit alpha, 3 bits version 0: 32 bits little-endian.
  const bits = ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14) | (1 << 28);
  payload.writeUInt32LE(bits >>> 0, 1);
  return payload;
}

/** A simple-format lossless WebP declaring `width`×`height` (each ≤ 16383, the WebP maximum). */
export function webpLosslessBomb(width: number, height: number): Buffer {
  return riffWebp([riffChunk('VP8L', vp8lPayload(width, height))]);
}

/** An extended-format WebP (VP8X canvas, 24-bit dimensions) whose canvas and bitstream declare `width`×`height`. */
export function webpExtendedBomb(width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(10, 0);
  vp8x[0] = 0x10; // alpha flag
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  return riffWebp([riffChunk('VP8X', vp8x), riffChunk('VP8L', vp8lPayload(width, height))]);
}
