// owns: the cheap look at an input's bytes before any decoder runs: declared size and a JPEG's scan count.
import type { InputFormat } from './formats.ts';

/**
 * Most scans a JPEG may have. Encoders write 1 (baseline) or about 10 (libjpeg's and mozjpeg's progressive
 * scripts: 6 to 10); every legal successive-approximation step of a colour image is over 2000, and libjpeg walks
 * every 8×8 block once per scan where it cannot be interrupted (libjpeg-turbo advises a scan limit for untrusted
 * input; TurboJPEG's is 500).
 */
export const MAX_JPEG_SCANS = 100;

export interface JpegStructure {
  width: number;
  height: number;
  progressive: boolean;
  /** SOS markers found, counted up to MAX_JPEG_SCANS + 1. */
  scans: number;
}

const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
const isStandalone = (m: number) => (m >= 0xd0 && m <= 0xd7) || m === 0x01 || m === 0xd8;

/** End of the entropy-coded data that starts at `from`: the next marker that is not a stuffed 0xFF00 or a restart. */
function entropyEnd(buf: Buffer, from: number): number {
  for (let at = buf.indexOf(0xff, from); at >= 0; at = buf.indexOf(0xff, at + 1)) {
    const next = buf[at + 1];
    if (next === undefined) return buf.length;
    if (next !== 0x00 && next !== 0xff && !(next >= 0xd0 && next <= 0xd7)) return at;
  }
  return buf.length;
}

/** Walks a JPEG's markers (without decoding) for its first frame header and its number of scans. */
export function readJpegStructure(buf: Buffer): JpegStructure | undefined {
  const { frame, scans } = walkJpeg(buf, false);
  return frame && { ...frame, scans };
}

/** The first frame header, the one readJpegStructure finds, read by walking the markers only as far as it. */
export function readJpegFrame(buf: Buffer): JpegFrame | undefined {
  return walkJpeg(buf, true).frame;
}

/** Scans of a JPEG, counted up to MAX_JPEG_SCANS + 1 by walking all of its markers. */
export function jpegScanCount(buf: Buffer): number {
  return walkJpeg(buf, false).scans;
}

type JpegFrame = Omit<JpegStructure, 'scans'>;

function walkJpeg(buf: Buffer, untilFrame: boolean): { frame: JpegFrame | undefined; scans: number } {
  let frame: JpegFrame | undefined;
  let scans = 0;
  let at = 2;
  while (at + 4 <= buf.length && scans <= MAX_JPEG_SCANS) {
    if (buf[at] !== 0xff) {
      // Like libjpeg, skip stray bytes to the next marker: scans hidden behind garbage still count.
      at = buf.indexOf(0xff, at);
      if (at < 0) break;
      continue;
    }
    const marker = buf[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker === 0xd9) break;
    if (isStandalone(marker)) {
      at += 2;
      continue;
    }
    const length = buf.readUInt16BE(at + 2);
    if (length < 2) break;
    if (isSof(marker) && frame === undefined && at + 9 <= buf.length) {
      frame = {
        height: buf.readUInt16BE(at + 5),
        width: buf.readUInt16BE(at + 7),
        progressive: marker === 0xc2 || marker === 0xc6 || marker === 0xca || marker === 0xce,
      };
      if (untilFrame) break;
    }
    if (marker === 0xda) {
      scans++;
      at = entropyEnd(buf, at + 2 + length);
      continue;
    }
    at += 2 + length;
  }
  return { frame, scans };
}

const SOS = Buffer.from([0xff, 0xda]);

/**
 * True when a JPEG has more than MAX_JPEG_SCANS scans, whether or not it has a readable frame header. Every scan the
 * walk counts starts at the bytes FF DA, so a file holding no more than MAX_JPEG_SCANS of them anywhere cannot have
 * more scans: one native search (memchr) settles it for any real photo, where the walk would cross the entropy-coded
 * data with a call per stuffed 0xFF (about 9,500 in a 2.4 MB photo). Only files with more FF DA pairs are walked.
 */
export function hasTooManyJpegScans(buf: Buffer): boolean {
  let pairs = 0;
  for (let at = buf.indexOf(SOS); at >= 0; at = buf.indexOf(SOS, at + 2)) {
    if (++pairs > MAX_JPEG_SCANS) return walkJpeg(buf, false).scans > MAX_JPEG_SCANS;
  }
  return false;
}

/** Width and height as the file's header declares them, or undefined when the header cannot be read. */
export function declaredSize(
  buf: Buffer,
  format: InputFormat,
): { width: number; height: number } | undefined {
  try {
    switch (format) {
      case 'jpeg':
        return readJpegStructure(buf);
      case 'png':
        return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
      case 'gif':
        return { width: buf.readUInt16LE(6), height: buf.readUInt16LE(8) };
      case 'webp':
        return webpSize(buf);
      case 'tiff':
        return tiffSize(buf);
      default:
        return undefined;
    }
  } catch {
    return undefined; // a header shorter than it says
  }
}

function webpSize(buf: Buffer): { width: number; height: number } | undefined {
  const chunk = buf.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { width: buf.readUIntLE(24, 3) + 1, height: buf.readUIntLE(27, 3) + 1 };
  if (chunk === 'VP8L') {
    const bits = buf.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8 ')
    return { width: buf.readUInt16LE(26) & 0x3fff, height: buf.readUInt16LE(28) & 0x3fff };
  return undefined;
}

function tiffSize(buf: Buffer): { width: number; height: number } | undefined {
  const le = buf[0] === 0x49;
  const u16 = (at: number) => (le ? buf.readUInt16LE(at) : buf.readUInt16BE(at));
  const u32 = (at: number) => (le ? buf.readUInt32LE(at) : buf.readUInt32BE(at));
  const ifd = u32(4);
  let width: number | undefined;
  let height: number | undefined;
  for (let i = 0, n = u16(ifd); i < n; i++) {
    const entry = ifd + 2 + i * 12;
    const tag = u16(entry);
    const value = u16(entry + 2) === 3 ? u16(entry + 8) : u32(entry + 8);
    if (tag === 256) width = value;
    if (tag === 257) height = value;
  }
  return width !== undefined && height !== undefined ? { width, height } : undefined;
}
