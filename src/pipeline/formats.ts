// Accepted inputs (by magic bytes, before any decoder runs) and the default output format rule.
import { HEIF_BRANDS, heifBrands, readHeifStructure } from './heif-structure.ts';
import type { OutputFormat } from './operations.ts';

export type InputFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'tiff' | 'avif' | 'heic';

const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis']);

/**
 * HEIC or AVIF: the primary image's coding decides (a `mif1` file may hold either), its brands only when its boxes
 * cannot be read (the pipeline then says what is wrong).
 */
function heifFormat(buf: Buffer, brands: string[]): 'heic' | 'avif' {
  try {
    const { codec } = readHeifStructure(buf);
    if (codec === 'hevc') return 'heic';
    if (codec === 'av1') return 'avif';
  } catch {
    // unreadable: named by its brands
  }
  return brands.some((b) => HEIC_BRANDS.has(b)) ? 'heic' : 'avif';
}

/**
 * Recognises the accepted input formats from their first bytes. Anything else (SVG, PDF, HTML, RAW…)
 * never reaches a decoder, so libvips' other loaders cannot be reached by a client.
 */
export function sniffImageFormat(buf: Buffer): InputFormat | undefined {
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'jpeg';
  if (buf.length >= 8 && buf.readUInt32BE(0) === 0x89504e47 && buf.readUInt32BE(4) === 0x0d0a1a0a)
    return 'png';
  if (
    buf.length >= 6 &&
    (buf.toString('latin1', 0, 6) === 'GIF87a' || buf.toString('latin1', 0, 6) === 'GIF89a')
  )
    return 'gif';
  if (buf.length >= 12 && buf.toString('latin1', 0, 4) === 'RIFF' && buf.toString('latin1', 8, 12) === 'WEBP')
    return 'webp';
  if (buf.length >= 4) {
    const head = buf.readUInt32BE(0);
    if (head === 0x49492a00 || head === 0x4d4d002a) return 'tiff';
  }
  const brands = heifBrands(buf);
  if (brands?.some((b) => HEIF_BRANDS.has(b))) return heifFormat(buf, brands);
  return undefined;
}

/** `format` absent: the input's format when it is an output format, else png. */
export function defaultOutputFormat(input: InputFormat): OutputFormat {
  return input === 'jpeg' || input === 'png' || input === 'webp' || input === 'avif' ? input : 'png';
}

/**
 * The libvips loaders of the accepted inputs. Every other loader (SVG, PDF, ImageMagick, OpenSlide, raw…) is
 * blocked at start, so a file that fools the sniffer still cannot reach them.
 */
export const ACCEPTED_LOADERS = [
  'VipsForeignLoadJpeg',
  'VipsForeignLoadPng',
  'VipsForeignLoadWebp',
  'VipsForeignLoadHeif',
  'VipsForeignLoadNsgif',
  'VipsForeignLoadTiff',
];

/**
 * The format sharp's metadata reports for each sniffed input: AVIF is read by the heif loader, HEIC by libheif in
 * WebAssembly in a child, which hands libvips a PNG of its pixels (heif-decode.ts).
 */
const DECODED_AS: Record<InputFormat, string> = {
  jpeg: 'jpeg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  tiff: 'tiff',
  avif: 'heif',
  heic: 'png',
};

/** True when the decoder that read the bytes is the one their magic bytes announced. */
export function decodedAsSniffed(sniffed: InputFormat, decodedFormat: string | undefined): boolean {
  return DECODED_AS[sniffed] === decodedFormat;
}
