// owns: the decoders of the formats whose row says `decoder: { by: 'children' }`, one entry each: the structure
// reader the server runs on the bytes alone before any decoder (probe.ts holds every input's limits to it), and the
// decode that runs only in the killable children. Adding such a format is its row plus its decoder module and entry
// here (CONTRIBUTING.md, "Adding a format").
import { allowHeicDecoding, decodeHeic, heicStructure } from './heif-decode.ts';
import type { ChildDecodedFormat } from './formats.ts';

/** What a decoder in the children reads from a file's structure, nothing decoded yet. */
export interface ChildStructure {
  /** The image's size as stored, before `orientation` turns it upright. */
  width: number;
  height: number;
  /** Pixels of the coded pictures the decoder makes it from (a grid's tiles may reach past the image together). */
  codedPixels: number;
  /** The EXIF orientation (1–8) that turns the stored pixels upright, as the decoder hands them over. */
  orientation: number;
  /** Top-level images in the file (a burst holds several): the decoder makes the primary one. */
  images: number;
  hasAlpha: boolean;
  icc?: Buffer;
  exif?: Buffer;
  xmp?: Buffer;
  iptc?: Buffer;
}

export interface ChildDecoder {
  /** The structure, read from the bytes alone; what must not be decoded is refused here (422 naming the format). */
  structure(input: Buffer): ChildStructure;
  /**
   * The primary image's pixels, upright, with its profile and metadata, as bytes libvips reads as its row's
   * `reportedAs`. Refuses outside an isolated child; the child is killed at the deadline, which bounds it.
   */
  decode(input: Buffer, structure: ChildStructure): Buffer;
  /** Called once by the isolated child (isolated-child.ts): `decode` refuses in every other process. */
  allowDecoding(): void;
}

/** The decoder of each format decoded in the children. */
export const CHILD_DECODERS: Readonly<Record<ChildDecodedFormat, ChildDecoder>> = {
  heic: { structure: heicStructure, decode: decodeHeic, allowDecoding: allowHeicDecoding },
};

/** Lets every decoder in the children decode: called once by the isolated child, and nowhere else in the server. */
export function allowChildDecoding(): void {
  for (const decoder of Object.values(CHILD_DECODERS)) decoder.allowDecoding();
}
