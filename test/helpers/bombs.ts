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

/**
 * A little-endian TIFF of `pages` one-pixel grey pages, 114 bytes each: libtiff walks every directory before libvips
 * can count the pages (98,000 in 10 MB took 0.64 s of the server's CPU per info probe).
 */
export function tiffPageBomb(pages: number): Buffer {
  const entries: [tag: number, type: number, value: number][] = [
    [256, 4, 1], // ImageWidth
    [257, 4, 1], // ImageLength
    [258, 3, 8], // BitsPerSample
    [259, 3, 1], // Compression: none
    [262, 3, 1], // PhotometricInterpretation: BlackIsZero
    [273, 4, 8], // StripOffsets: the one byte after the header, shared by every page
    [277, 3, 1], // SamplesPerPixel
    [278, 4, 1], // RowsPerStrip
    [279, 4, 1], // StripByteCounts
  ];
  const ifdSize = 2 + entries.length * 12 + 4;
  const first = 10;
  const buf = Buffer.alloc(first + pages * ifdSize, 0);
  buf.write('II', 0, 'latin1');
  buf.writeUInt16LE(42, 2);
  buf.writeUInt32LE(first, 4);
  buf[8] = 0x80;
  for (let page = 0; page < pages; page++) {
    const ifd = first + page * ifdSize;
    buf.writeUInt16LE(entries.length, ifd);
    entries.forEach(([tag, type, value], i) => {
      const at = ifd + 2 + i * 12;
      buf.writeUInt16LE(tag, at);
      buf.writeUInt16LE(type, at + 2);
      buf.writeUInt32LE(1, at + 4);
      if (type === 3) buf.writeUInt16LE(value, at + 8);
      else buf.writeUInt32LE(value, at + 8);
    });
    buf.writeUInt32LE(page + 1 < pages ? ifd + ifdSize : 0, ifd + 2 + entries.length * 12);
  }
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

/** Writes JPEG entropy-coded bits, stuffing a zero byte after every 0xFF and padding a scan's end with ones. */
class JpegBitWriter {
  private readonly bytes: number[] = [];
  private acc = 0;
  private count = 0;
  write(value: number, bits: number) {
    for (let i = bits - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((value >> i) & 1);
      if (++this.count === 8) this.flushByte();
    }
  }
  private flushByte() {
    this.bytes.push(this.acc);
    if (this.acc === 0xff) this.bytes.push(0);
    this.acc = 0;
    this.count = 0;
  }
  end(): Buffer {
    if (this.count > 0) this.write(0xff, 8 - this.count);
    return Buffer.from(this.bytes);
  }
}

function jpegSegment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/**
 * A valid, flat grey progressive JPEG of `width`×`height` whose every AC coefficient is sent on its own, one bit
 * at a time: one DC scan, then for each of the 63 AC coefficients a first scan (Al 13) and 13 refinement scans, up
 * to `scans` in all (at most 883, every legal successive-approximation step of one component). Every AC scan is a
 * few EOB runs, so the file stays small (a bit per 8×8 block for the DC scan) while the decoder walks every block
 * once per scan: libjpeg cannot be interrupted while it does.
 */
export function progressiveScanBomb(width: number, height: number, scans = 883): Buffer {
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const sof = Buffer.from([8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]);
  // DC table 0: one symbol (category 0, a zero difference) coded as '0'.
  const dcTable = Buffer.from([0x00, 1, ...new Array<number>(15).fill(0), 0x00]);
  // AC table 0: the 15 EOB-run symbols EOB0..EOB14 (r << 4), four bits each (codes 0000..1110).
  const eobSymbols = Array.from({ length: 15 }, (_, r) => r << 4);
  const acTable = Buffer.from([0x10, 0, 0, 0, 15, ...new Array<number>(12).fill(0), ...eobSymbols]);
  const parts = [
    Buffer.from([0xff, 0xd8]),
    jpegSegment(0xdb, Buffer.from([0, ...new Array<number>(64).fill(1)])),
    jpegSegment(0xc2, sof),
    jpegSegment(0xc4, Buffer.concat([dcTable, acTable])),
  ];
  const sos = (ss: number, se: number, ah: number, al: number) =>
    jpegSegment(0xda, Buffer.from([1, 1, 0x00, ss, se, (ah << 4) | al]));

  const dc = new JpegBitWriter();
  for (let i = 0; i < blocks; i++) dc.write(0, 1);
  parts.push(sos(0, 0, 0, 0), dc.end());

  // Every block's band is empty: the whole scan is EOB runs of at most 32767 blocks.
  const eobRuns = new JpegBitWriter();
  for (let left = blocks; left > 0;) {
    const run = Math.min(left, 32767);
    const r = Math.floor(Math.log2(run));
    eobRuns.write(r, 4);
    eobRuns.write(run - (1 << r), r);
    left -= run;
  }
  const acData = eobRuns.end();
  let written = 1;
  for (let k = 1; k <= 63 && written < scans; k++) {
    for (let al = 13; al >= 0 && written < scans; al--, written++) {
      parts.push(sos(k, k, al === 13 ? 0 : al + 1, al), acData);
    }
  }
  parts.push(Buffer.from([0xff, 0xd9]));
  return Buffer.concat(parts);
}
