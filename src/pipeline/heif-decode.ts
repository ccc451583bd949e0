// owns: HEIC's decoder in the children (child-decoders.ts): its structure as the server refuses it before any
// decoder, and decoding HEIC (HEVC-coded HEIF) with libheif compiled to WebAssembly (libheif-js), only in an isolated
// child, into a PNG that libvips reads: the primary image's pixels, upright, with its ICC profile, EXIF and XMP.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { crc32, deflateSync } from 'node:zlib';
import { isApiError } from '../errors.ts';
import { undecodableImage } from './errors.ts';
import { HeifStructureError, readHeifStructure, type HeifStructure } from './heif-structure.ts';

/**
 * Most tiles of a HEIC's grid. Cameras write a few hundred at most (an iPhone's 48 MP photo: 192 tiles of 512×512);
 * each tile is a decode of its own, and a grid may name one small tile thousands of times.
 */
export const MAX_HEIC_TILES = 1024;

/**
 * A HEIC's item structure, read from its boxes before any decoder runs, refused where it must not be decoded (422):
 * unreadable or truncated, a primary image not coded in HEVC, or a grid of more than MAX_HEIC_TILES tiles. The limits
 * of every input (its pixels, its images as frames) are probe.ts'.
 */
export function heicStructure(input: Buffer): HeifStructure {
  let structure: HeifStructure;
  try {
    structure = readHeifStructure(input);
  } catch (err) {
    if (err instanceof HeifStructureError) throw undecodableImage('heic', err.message, err);
    throw err;
  }
  if (structure.codec !== 'hevc') {
    throw undecodableImage('heic', `its primary image is a ${structure.primaryType} item, not HEVC-coded`);
  }
  if (structure.tiles > MAX_HEIC_TILES) {
    throw undecodableImage(
      'heic',
      `its grid has ${structure.tiles} tiles, more than the ${MAX_HEIC_TILES} this server decodes (cameras write a few hundred at most)`,
    );
  }
  return structure;
}

/** The parts of libheif-js' embind interface used here (its own types are not exported by the package). */
interface HeifError {
  code: { value: number };
  subcode: { value: number };
  message: string;
}

/** libheif's subcode for a picture past its limits: with an error code that words it as a failed allocation. */
const SECURITY_LIMIT_EXCEEDED = 1000;

/**
 * What libheif's error says, for the answer. A security limit (a coded picture larger than its item declares) is no
 * memory shortage: said without libheif's "Memory allocation error", so the child that met it is kept.
 */
function problemOf(err: HeifError | null, otherwise: string): string {
  if (!err) return otherwise;
  return err.subcode?.value === SECURITY_LIMIT_EXCEEDED
    ? `its coded picture is larger than it declares (libheif: ${err.message.replace(/^Memory allocation error: /, '')})`
    : err.message;
}
interface HeifPlane {
  id: number;
  width: number;
  height: number;
  stride: number;
  data: Uint8Array;
}
interface LibHeif {
  heif_context_alloc(): object;
  heif_context_free(context: object): void;
  heif_context_read_from_memory(context: object, data: Uint8Array): HeifError;
  heif_js_context_get_primary_image_handle(context: object): object | HeifError | null;
  heif_image_handle_release(handle: object): void;
  heif_js_decode_image2(
    handle: object,
    space: number,
    chroma: number,
  ): { channels: HeifPlane[]; image: object } | HeifError | null;
  heif_image_release(image: object): void;
  heif_colorspace: { heif_colorspace_RGB: number };
  heif_chroma: { heif_chroma_interleaved_RGB: number; heif_chroma_interleaved_RGBA: number };
  heif_channel: { heif_channel_interleaved: number };
  heif_get_version(): string;
}

let decodingAllowed = false;

/**
 * Called once by the isolated child (isolated-child.ts) and by tools that measure the decoder: everywhere else
 * decodeHeic refuses, so a HEIC can never be decoded in the server's own process, whatever calls the pipeline.
 */
export function allowHeicDecoding(): void {
  decodingAllowed = true;
}

/** The refusal of decodeHeic outside an isolated child (a server bug if ever seen: run.ts never sends HEIC here). */
export const HEIC_ONLY_IN_CHILDREN = 'HEIC is decoded only in an isolated child process';

let library: LibHeif | undefined;

/**
 * libheif in WebAssembly, compiled on a child's first HEIC (about 0.1 s) and kept for its next jobs. The wasm file is
 * read from the package's folder, found as Node resolves it (the bundle in dist/ leaves packages in node_modules).
 */
function libheif(): LibHeif {
  if (!library) {
    const require = createRequire(import.meta.url);
    const wasmBinary = readFileSync(require.resolve('libheif-js/libheif-wasm/libheif.wasm'));
    const factory = require('libheif-js/libheif-wasm/libheif.js') as (options: object) => LibHeif;
    library = factory({ wasmBinary, print: () => {}, printErr: () => {} });
  }
  return library;
}

/** The version of libheif the decoder runs (bench and docs). */
export function libheifVersion(): string {
  return libheif().heif_get_version();
}

const failed = (value: unknown): value is HeifError | null =>
  value === null || value === undefined || (typeof value === 'object' && 'code' in value);

/** One interleaved plane of 8-bit samples: `channels` per pixel, rows `stride` bytes apart. */
export interface Pixels {
  data: Uint8Array;
  width: number;
  height: number;
  stride: number;
  channels: 3 | 4;
}

/**
 * Decodes the primary image of a HEIC whose structure was read and checked (HEVC; its size, tiles and images within
 * the limits) into a PNG (heicAsPng) with its metadata. libheif applies the grid and HEIF's transforms (irot, imir,
 * clap); its failures are 422 naming HEIC. Synchronous: the child is killed at the deadline, which bounds it.
 */
export function decodeHeic(
  input: Buffer,
  structure: Pick<HeifStructure, 'hasAlpha' | 'icc' | 'exif' | 'xmp'>,
): Buffer {
  if (!decodingAllowed) throw new Error(HEIC_ONLY_IN_CHILDREN);
  try {
    return decodePrimary(libheif(), input, structure);
  } catch (err) {
    if (isApiError(err)) throw err;
    // A trap inside the WebAssembly (an abort, memory it could not grow) leaves its state unknown: the next HEIC
    // starts a new instance.
    library = undefined;
    throw undecodableImage(
      'heic',
      `the decoder failed (${err instanceof Error ? err.message : String(err)})`,
      err,
    );
  }
}

function decodePrimary(
  lib: LibHeif,
  input: Buffer,
  structure: Pick<HeifStructure, 'hasAlpha' | 'icc' | 'exif' | 'xmp'>,
): Buffer {
  const undecodable = (detail: string) => undecodableImage('heic', detail);
  const context = lib.heif_context_alloc();
  try {
    const read = lib.heif_context_read_from_memory(context, input);
    if (read.code.value !== 0) throw undecodable(problemOf(read, 'unreadable'));
    const handle = lib.heif_js_context_get_primary_image_handle(context);
    if (failed(handle)) throw undecodable(problemOf(handle, 'no primary image'));
    try {
      const channels = structure.hasAlpha ? 4 : 3;
      const chroma = structure.hasAlpha
        ? lib.heif_chroma.heif_chroma_interleaved_RGBA
        : lib.heif_chroma.heif_chroma_interleaved_RGB;
      const image = lib.heif_js_decode_image2(handle, lib.heif_colorspace.heif_colorspace_RGB, chroma);
      if (failed(image)) throw undecodable(problemOf(image, 'the decoder gave no image'));
      try {
        const plane = image.channels.find((c) => c.id === lib.heif_channel.heif_channel_interleaved);
        if (!plane) throw undecodable('the decoder gave no interleaved plane');
        return heicAsPng({ ...plane, channels }, structure);
      } finally {
        lib.heif_image_release(image.image);
      }
    } finally {
      lib.heif_image_handle_release(handle);
    }
  } finally {
    lib.heif_context_free(context);
  }
}

const ORIENTATION_TAG = 0x0112;

/**
 * A copy of an EXIF block (from its TIFF header) whose Orientation is 1: the pixels are already upright (HEIF's
 * transforms are authoritative; MIAF makes the EXIF orientation informative only, and libheif, libvips and Apple's
 * decoders ignore it), so nothing downstream may turn them again. Unchanged when it has no readable Orientation.
 */
export function exifUpright(exif: Buffer): Buffer {
  const copy = Buffer.from(exif);
  const order = copy.toString('latin1', 0, 2);
  if (copy.length < 8 || (order !== 'II' && order !== 'MM')) return copy;
  const le = order === 'II';
  const u16 = (at: number) => (le ? copy.readUInt16LE(at) : copy.readUInt16BE(at));
  const ifd = le ? copy.readUInt32LE(4) : copy.readUInt32BE(4);
  if (ifd + 2 > copy.length) return copy;
  for (let i = 0, n = u16(ifd); i < n; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > copy.length) break;
    if (u16(entry) !== ORIENTATION_TAG) continue;
    if (le) copy.writeUInt16LE(1, entry + 8);
    else copy.writeUInt16BE(1, entry + 8);
  }
  return copy;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The decoded pixels as a PNG libvips reads like any input, with the HEIC's ICC profile (iCCP), EXIF (eXIf, made
 * upright) and XMP (iTXt): sharp takes raw pixels, but only a file can bring a profile and EXIF with them. The image
 * data is stored uncompressed (deflate level 0), so writing and reading it cost about a copy each.
 */
export function heicAsPng(pixels: Pixels, metadata: Pick<HeifStructure, 'icc' | 'exif' | 'xmp'>): Buffer {
  const { data, width, height, stride, channels } = pixels;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, channels === 4 ? 6 : 2, 0, 0, 0], 8);
  // Each row: filter type 0 (none), then its samples.
  const row = width * channels;
  const scanlines = Buffer.alloc((row + 1) * height);
  for (let y = 0; y < height; y++)
    scanlines.set(data.subarray(y * stride, y * stride + row), y * (row + 1) + 1);
  const chunks = [chunk('IHDR', header)];
  if (metadata.icc) {
    // Profile name, its null, compression method 0, then the zlib stream.
    const name = Buffer.from('ICC Profile\0\0', 'latin1');
    chunks.push(chunk('iCCP', Buffer.concat([name, deflateSync(metadata.icc)])));
  }
  if (metadata.exif) chunks.push(chunk('eXIf', exifUpright(metadata.exif)));
  if (metadata.xmp) {
    // Keyword, its null, not compressed, method 0, no language tag, no translated keyword, then the text.
    const keyword = Buffer.from('XML:com.adobe.xmp\0\0\0\0\0', 'latin1');
    chunks.push(chunk('iTXt', Buffer.concat([keyword, metadata.xmp])));
  }
  chunks.push(chunk('IDAT', deflateSync(scanlines, { level: 0 })), chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat([PNG_SIGNATURE, ...chunks]);
}
