// owns: the cheap look at an input's bytes before any decoder runs: declared size, a JPEG's scan count, and the
// frames of a GIF or WebP and the pages of a TIFF, each read in one linear walk that never calls libvips.
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
  /** The frame's colour components: 1 grey, 3 colour, 4 CMYK or YCCK. */
  components: number;
  /**
   * The first scan holds every component. libjpeg then decodes a baseline JPEG from that scan alone, handing out rows
   * as it goes (scans after it are never decoded: 2 MP of noise with its scan four times decoded in the time of
   * one); otherwise every scan is decoded before the first row.
   */
  interleaved: boolean;
  /**
   * The EXIF orientation libvips reads from the one Exif segment before the first scan (1 without one);
   * 'unclear' when more than one Exif segment or a malformed one leaves it to libexif's reading.
   */
  orientation: number | 'unclear';
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

/**
 * The first frame header, the one readJpegStructure finds, read by walking the markers only as far as the first scan
 * after it (the segments libjpeg reads before decoding).
 */
export function readJpegFrame(buf: Buffer): JpegFrame | undefined {
  return walkJpeg(buf, true).frame;
}

/** Scans of a JPEG, counted up to MAX_JPEG_SCANS + 1 by walking all of its markers. */
export function jpegScanCount(buf: Buffer): number {
  return walkJpeg(buf, false).scans;
}

type JpegFrame = Omit<JpegStructure, 'scans'>;

const EXIF_HEADER = Buffer.from('Exif\0\0', 'latin1');
const ORIENTATION_TAG = 0x0112;
const SHORT = 3;

/**
 * The orientation in an Exif segment's payload (`start` at its "Exif\0\0", `end` past it): 1 without the tag, or
 * 'unclear' for anything libexif might read otherwise (a TIFF header, directory or tag out of bounds or of another
 * type, a value outside 1–8).
 */
function exifOrientation(buf: Buffer, start: number, end: number): number | 'unclear' {
  const tiff = start + EXIF_HEADER.length;
  const order = buf.toString('latin1', tiff, tiff + 2);
  if (order !== 'II' && order !== 'MM') return 'unclear';
  const le = order === 'II';
  const u16 = (at: number) => (le ? buf.readUInt16LE(at) : buf.readUInt16BE(at));
  const u32 = (at: number) => (le ? buf.readUInt32LE(at) : buf.readUInt32BE(at));
  if (tiff + 8 > end || u16(tiff + 2) !== 42) return 'unclear';
  const directory = tiff + u32(tiff + 4);
  if (directory + 2 > end) return 'unclear';
  const entries = u16(directory);
  if (directory + 2 + entries * 12 > end) return 'unclear';
  for (let i = 0; i < entries; i++) {
    const entry = directory + 2 + i * 12;
    if (u16(entry) !== ORIENTATION_TAG) continue;
    const value = u16(entry + 8);
    return u16(entry + 2) === SHORT && u32(entry + 4) === 1 && value >= 1 && value <= 8 ? value : 'unclear';
  }
  return 1;
}

function walkJpeg(buf: Buffer, untilFrame: boolean): { frame: JpegFrame | undefined; scans: number } {
  let frame: Omit<JpegFrame, 'orientation' | 'interleaved'> | undefined;
  let interleaved = false;
  let scans = 0;
  let exifSegments = 0;
  let orientation: number | 'unclear' = 1;
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
    if (isSof(marker) && frame === undefined && at + 10 <= buf.length) {
      frame = {
        height: buf.readUInt16BE(at + 5),
        width: buf.readUInt16BE(at + 7),
        progressive: marker === 0xc2 || marker === 0xc6 || marker === 0xca || marker === 0xce,
        components: buf[at + 9] ?? 0,
      };
    }
    const end = Math.min(at + 2 + length, buf.length);
    if (
      marker === 0xe1 &&
      scans === 0 &&
      buf.subarray(at + 4, at + 4 + EXIF_HEADER.length).equals(EXIF_HEADER)
    ) {
      exifSegments++;
      orientation = exifSegments > 1 ? 'unclear' : exifOrientation(buf, at + 4, end);
    }
    if (marker === 0xda) {
      if (frame !== undefined && scans === 0) interleaved = buf[at + 4] === frame.components;
      if (untilFrame && frame !== undefined) break;
      scans++;
      at = entropyEnd(buf, at + 2 + length);
      continue;
    }
    at += 2 + length;
  }
  return { frame: frame && { ...frame, orientation, interleaved }, scans };
}

const SOS = Buffer.from([0xff, 0xda]);

/**
 * True when a JPEG has more than MAX_JPEG_SCANS scans, whether or not it has a readable frame header. Every scan the
 * walk counts starts at the bytes FF DA, so a file holding no more than MAX_JPEG_SCANS of them anywhere cannot have
 * more scans: one native search (memchr) settles it for any real photo, where the walk would cross the entropy-coded
 * data with a call per stuffed 0xFF (about 9,500 in a 2.4 MB photo). Only files with more FF DA pairs are walked.
 * What it saves: docs/performance.md.
 */
export function hasTooManyJpegScans(buf: Buffer): boolean {
  let pairs = 0;
  for (let at = buf.indexOf(SOS); at >= 0; at = buf.indexOf(SOS, at + 2)) {
    if (++pairs > MAX_JPEG_SCANS) return walkJpeg(buf, false).scans > MAX_JPEG_SCANS;
  }
  return false;
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

/** One entry of a TIFF directory: its tag, field type and count, and its value (or where its values start). */
interface TiffEntry {
  tag: number;
  type: number;
  count: number;
  /** The first value as a SHORT or LONG (read for one-value fields: width, height). */
  value: number;
  /** Where an ASCII field's text starts: in the entry when it fits in its 4 bytes, else at the offset it holds. */
  valuesAt: number;
}

const TIFF_ASCII = 2;
const TIFF_SHORT = 3;

/** The entries of a TIFF's first directory (the page libvips decodes). Throws on a directory past the end. */
function tiffEntries(buf: Buffer): TiffEntry[] {
  const le = buf[0] === 0x49;
  const u16 = (at: number) => (le ? buf.readUInt16LE(at) : buf.readUInt16BE(at));
  const u32 = (at: number) => (le ? buf.readUInt32LE(at) : buf.readUInt32BE(at));
  const ifd = u32(4);
  const entries: TiffEntry[] = [];
  for (let i = 0, n = u16(ifd); i < n; i++) {
    const entry = ifd + 2 + i * 12;
    const type = u16(entry + 2);
    const count = u32(entry + 4);
    const value = type === TIFF_SHORT ? u16(entry + 8) : u32(entry + 8);
    entries.push({ tag: u16(entry), type, count, value, valuesAt: count <= 4 ? entry + 8 : u32(entry + 8) });
  }
  return entries;
}

function tiffSize(buf: Buffer): { width: number; height: number } | undefined {
  const entries = tiffEntries(buf);
  const width = entries.find((e) => e.tag === 256)?.value;
  const height = entries.find((e) => e.tag === 257)?.value;
  return width !== undefined && height !== undefined ? { width, height } : undefined;
}

/**
 * The first tag of a TIFF's first directory whose text (an ASCII field) does not end in the null byte TIFF requires,
 * or undefined. libtiff warns on such a tag while it decodes, and a warning fails the job (failOn 'warning'): a
 * GeoTIFF's GeoAsciiParams (34737) written without it is the common case.
 */
export function tiffUnterminatedTextTag(buf: Buffer): number | undefined {
  try {
    return tiffEntries(buf).find(
      (e) =>
        e.type === TIFF_ASCII &&
        e.count > 0 &&
        e.valuesAt + e.count <= buf.length &&
        buf[e.valuesAt + e.count - 1] !== 0,
    )?.tag;
  } catch {
    return undefined; // a directory past the end: libvips says what is wrong
  }
}

/**
 * A TIFF's pages: its chain of image file directories (IFDs), each one's entry count and next offset read, never its
 * data (libtiff walks the chain too, before libvips can count its pages: 0.64 s for 98,000 one-pixel pages). The walk
 * stops once it has counted `maxPages` + 1 (enough to refuse the file), so a chain that loops ends there; one that
 * leaves the file ends the walk, unreadable.
 */
function tiffPages(buf: Buffer, maxPages: number): { frames: number; readable: boolean } {
  const le = buf[0] === 0x49;
  let frames = 0;
  for (let ifd = le ? buf.readUInt32LE(4) : buf.readUInt32BE(4); ifd !== 0 && frames <= maxPages;) {
    if (ifd + 2 > buf.length) return { frames: Math.max(1, frames), readable: false };
    const next = ifd + 2 + (le ? buf.readUInt16LE(ifd) : buf.readUInt16BE(ifd)) * 12;
    if (next + 4 > buf.length) return { frames: frames + 1, readable: false };
    frames++;
    ifd = le ? buf.readUInt32LE(next) : buf.readUInt32BE(next);
  }
  return { frames: Math.max(1, frames), readable: true };
}

/**
 * What an input's bytes say before any decoder runs. `width` × `height` is what libvips decodes one frame to: for a
 * GIF the screen grown to hold every frame (the decoder grows it; a screen descriptor may lie), for an animated WebP
 * the canvas. `readable`: the structure was walked to its end without an inconsistency (only then may it decide
 * that work is bounded); the counts of an unreadable file are what the walk found before it stopped.
 */
export interface InputStructure {
  format: InputFormat;
  width: number;
  height: number;
  frames: number;
  /**
   * JPEG only: a progressive frame, and its scans (counted up to MAX_JPEG_SCANS + 1; 1 for a baseline JPEG whose
   * first scan holds every component).
   */
  progressive: boolean;
  scans: number;
  readable: boolean;
}

/**
 * Reads an input's structure in one linear walk (markers, chunks or blocks, never pixel data): the size a decoder
 * would produce and the number of frames (a TIFF's pages counted up to `maxFrames` + 1; by default as many as its
 * bytes could hold, six each, past which a chain loops). Undefined for AVIF and HEIC, whose boxes are not walked here.
 */
export function readInputStructure(
  buf: Buffer,
  format: InputFormat,
  maxFrames = buf.length / 6,
): InputStructure | undefined {
  try {
    switch (format) {
      case 'jpeg':
        return jpegInputStructure(buf);
      case 'png':
        return pngStructure(buf);
      case 'gif':
        return gifStructure(buf);
      case 'webp':
        return webpStructure(buf);
      case 'tiff': {
        const size = tiffSize(buf);
        const pages = tiffPages(buf, maxFrames);
        return size && { format, ...size, progressive: false, scans: 0, ...pages };
      }
      default:
        return undefined;
    }
  } catch {
    return undefined; // a header shorter than it says
  }
}

function jpegInputStructure(buf: Buffer): InputStructure | undefined {
  const frame = readJpegFrame(buf);
  if (frame === undefined) return undefined;
  // Walking the scans crosses the entropy-coded data, so a baseline JPEG whose first scan holds every component is
  // not walked: that scan is the only one decoded, row by row. Every other JPEG's scans are counted
  // (hasTooManyJpegScans has refused one with too many).
  const scans = frame.progressive || !frame.interleaved ? jpegScanCount(buf) : 1;
  return { format: 'jpeg', ...frame, frames: 1, scans, readable: true };
}

const IHDR = 0x49484452;

function pngStructure(buf: Buffer): InputStructure | undefined {
  if (buf.length < 24 || buf.readUInt32BE(12) !== IHDR) return undefined;
  return {
    format: 'png',
    width: buf.readUInt32BE(16),
    height: buf.readUInt32BE(20),
    frames: 1,
    progressive: false,
    scans: 0,
    readable: true,
  };
}

/** Bytes of a GIF colour table announced by a packed-fields byte (none when its top bit is clear). */
const gifColourTable = (flags: number) => (flags & 0x80 ? 3 * (2 << (flags & 7)) : 0);

/** The offset after a chain of GIF data sub-blocks starting at `at` (each a length byte; 0 ends the chain). */
function skipSubBlocks(buf: Buffer, at: number): number {
  let next = at;
  while (next < buf.length) {
    const length = buf[next]!;
    next += 1 + length;
    if (length === 0) return next;
  }
  return -1;
}

/**
 * A GIF's image descriptors, counted one by one, and the screen grown to the largest frame's right and bottom edge
 * (libnsgif grows it so, whatever the logical screen descriptor says).
 */
function gifStructure(buf: Buffer): InputStructure | undefined {
  if (buf.length < 13) return undefined;
  let width = buf.readUInt16LE(6);
  let height = buf.readUInt16LE(8);
  let frames = 0;
  let readable = false;
  let at = 13 + gifColourTable(buf[10]!);
  while (at >= 0 && at < buf.length) {
    const block = buf[at];
    if (block === 0x3b) {
      readable = frames > 0;
      break;
    }
    if (block === 0x21) {
      at = skipSubBlocks(buf, at + 2);
    } else if (block === 0x2c && at + 10 <= buf.length) {
      frames++;
      width = Math.max(width, buf.readUInt16LE(at + 1) + buf.readUInt16LE(at + 5));
      height = Math.max(height, buf.readUInt16LE(at + 3) + buf.readUInt16LE(at + 7));
      // The descriptor, its local colour table, the LZW code size byte, then the image data's sub-blocks.
      at = skipSubBlocks(buf, at + 10 + gifColourTable(buf[at + 9]!) + 1);
    } else {
      break;
    }
  }
  return {
    format: 'gif',
    width,
    height,
    frames: Math.max(1, frames),
    progressive: false,
    scans: 0,
    readable,
  };
}

/** A GIF's graphic control extension: label 0xf9, its 4-byte block (flags, delay, transparent index). */
const GCE = 0xf9;
const GCE_TRANSPARENT = 0x01;
/** The colour index no pixel of a table under 256 entries can take, made transparent where one is needed. */
const SPARE_INDEX = 255;

/**
 * The bytes libvips should decode for a GIF whose canvas has pixels no frame draws (the first frame smaller than the
 * screen grown to hold every frame) while no frame declares a transparent colour: libnsgif leaves such pixels
 * transparent, as browsers show them, but libvips keeps an alpha channel only when a frame declares transparency, so
 * they came out black. The copy declares index 255 transparent on the first frame whose colour table has fewer than
 * 256 entries (no pixel can take that index), adding a graphic control extension where the frame has none. Undefined
 * when the GIF needs no change, or when every frame's table has 256 entries (then the pixels stay black).
 */
export function gifWithTransparentCanvas(buf: Buffer): Buffer | undefined {
  if (buf.length < 13) return undefined;
  const globalTable = gifColourTable(buf[10]!);
  let width = buf.readUInt16LE(6);
  let height = buf.readUInt16LE(8);
  let first: { left: number; top: number; width: number; height: number } | undefined;
  let gce = -1;
  let spare: { descriptor: number; gce: number } | undefined;
  let at = 13 + globalTable;
  while (at >= 0 && at < buf.length && buf[at] !== 0x3b) {
    if (buf[at] === 0x21 && at + 2 < buf.length) {
      if (buf[at + 1] === GCE && at + 7 <= buf.length) {
        if (buf[at + 3]! & GCE_TRANSPARENT) return undefined;
        gce = at;
      }
      at = skipSubBlocks(buf, at + 2);
    } else if (buf[at] === 0x2c && at + 10 <= buf.length) {
      const frame = {
        left: buf.readUInt16LE(at + 1),
        top: buf.readUInt16LE(at + 3),
        width: buf.readUInt16LE(at + 5),
        height: buf.readUInt16LE(at + 7),
      };
      first ??= frame;
      width = Math.max(width, frame.left + frame.width);
      height = Math.max(height, frame.top + frame.height);
      const table = buf[at + 9]! & 0x80 ? gifColourTable(buf[at + 9]!) : globalTable;
      if (!spare && table < 3 * 256) spare = { descriptor: at, gce };
      gce = -1;
      at = skipSubBlocks(buf, at + 10 + gifColourTable(buf[at + 9]!) + 1);
    } else {
      break;
    }
  }
  const covered =
    first && first.left === 0 && first.top === 0 && first.width === width && first.height === height;
  if (!first || covered || !spare) return undefined;
  if (spare.gce >= 0) {
    const copy = Buffer.from(buf);
    copy[spare.gce + 3] = copy[spare.gce + 3]! | GCE_TRANSPARENT;
    copy[spare.gce + 6] = SPARE_INDEX;
    return copy;
  }
  const added = Buffer.from([0x21, GCE, 0x04, GCE_TRANSPARENT, 0x00, 0x00, SPARE_INDEX, 0x00]);
  return Buffer.concat([buf.subarray(0, spare.descriptor), added, buf.subarray(spare.descriptor)]);
}

/** The bytes every libvips call of a job or probe reads: the input, or a GIF's copy with a transparent canvas. */
export function decoderInput(input: Buffer, format: InputFormat | undefined): Buffer {
  return format === 'gif' ? (gifWithTransparentCanvas(input) ?? input) : input;
}

const ANMF = 0x414e4d46;

/**
 * A WebP's size and frames: a simple file (one VP8 or VP8L chunk) has one; an extended one (VP8X) has its canvas,
 * and with the animation flag one frame per ANMF chunk, counted by walking the chunk headers (libwebp's demuxer
 * itself costs time quadratic in the frames before libvips can count them).
 */
function webpStructure(buf: Buffer): InputStructure | undefined {
  const size = webpSize(buf);
  if (size === undefined) return undefined;
  const still = { format: 'webp' as const, ...size, frames: 1, progressive: false, scans: 0 };
  if (buf.toString('latin1', 12, 16) !== 'VP8X') return { ...still, readable: buf.length >= 30 };
  const animated = (buf[20]! & 0x02) !== 0;
  let frames = 0;
  let at = 12;
  while (at + 8 <= buf.length) {
    if (buf.readUInt32BE(at) === ANMF) frames++;
    const length = buf.readUInt32LE(at + 4);
    at += 8 + length + (length & 1);
  }
  const readable = at === buf.length && (!animated || frames > 0);
  return { ...still, frames: animated ? Math.max(1, frames) : 1, readable };
}
