// owns: the image formats, one row each: how its bytes are recognised, what decodes it and whether a job with it may
// run in the main process; for an output its encoder and settings, quality model and search margins, alpha, frames,
// colour depths, and how an Accept header names it. Every format switch reads this table: adding a format is one row
// plus its encoder, or its decoder in the children (child-decoders.ts; CONTRIBUTING.md, "Adding a format").
import type { AvifOptions, Sharp } from 'sharp';
import { JPEG_WEBP_SAMPLE, SAMPLE, type QualityModel, type SampleShape } from './auto-quality.ts';
import { HEIF_BRANDS, heifBrands, readHeifStructure } from './heif-structure.ts';

/** An animation's frame delays (milliseconds) and loop count (0: forever), as sharp reads and writes them. */
export interface FrameTiming {
  delay?: number[];
  loop?: number;
}

/** What an encode is asked for: the format's own settings are the row's. */
export interface EncodeSettings {
  quality: number;
  avifEffort: number;
  /** mozjpeg's quantisation table for JPEG; only quality "auto" sets it, fixed numbers keep libjpeg's. */
  jpegQuantTable?: number | undefined;
  /** An animation encoded from raw frames: the delays and loop its encode writes. */
  frameTiming?: FrameTiming | undefined;
  /** A sample whose decoded pixels alone are read, never its size: an encoder may skip work that changes only size. */
  pixelsOnly?: boolean;
}

/** What a job's input is, as the structure walk read it (input-header.ts), for an input's in-process rule. */
export interface InputExtent {
  width: number;
  height: number;
  progressive: boolean;
  scans: number;
}

/**
 * Who decodes an input: a libvips loader (unblocked at start; its metadata must name `reportedAs`), a decoder that
 * runs only in the killable children before libvips sees pixels (its entry in child-decoders.ts; libvips then reads
 * what it hands over as `reportedAs`), or nobody yet (422 with `refused`).
 */
export type Decoder =
  | { by: 'libvips'; loader: string; reportedAs: string }
  | {
      by: 'children';
      reportedAs: string;
      /**
       * How libvips' loader of another row names this coding in its metadata's `compression`, for a file sniffed as
       * that row because its structure could not be read: refused as this format, never decoded by libvips.
       */
      libvipsCompression?: string;
    }
  | { by: 'none'; refused: string };

/** How an output is searched for a perceptual target (output-search.ts). */
export interface LossyRule {
  /** Where the search starts for a SSIMULACRA 2 target, and the score points per quality step around it. */
  model: QualityModel;
  /** Score points the search aims above the target: the samples overrate most photographs. */
  sampleMargin: number;
  /** A probe within this many points of the aim ends the search (the model's slope takes the last step). */
  probeTolerance: number;
  /** The tiles its quality is judged on. */
  sample: SampleShape;
  /** From AVIF_ONLY_FROM_PIXELS up, the other lossy formats are not searched beside it (it was the smallest). */
  smallestAtTarget?: true;
}

export interface OutputRule {
  /** `always`: every browser shows it, named in Accept or not; `named`: only when Accept names its media type. */
  accept: 'always' | 'named';
  /** The order formats are preferred in: the fetch's Accept header and `f:auto`'s negotiation, smallest first. */
  preference: number;
  /** Its sharp encode; the same settings write the same bytes for a sample and for the answer. */
  encode(image: Sharp, settings: EncodeSettings): Sharp;
  /** Absent: lossless, so quality means nothing to it (no `quality=` token, no search). */
  lossy?: LossyRule;
  /** It keeps an alpha channel (else the encode flattens onto background). */
  alpha: boolean;
  /** It keeps an animation's frames. */
  frames: boolean;
  /** It holds grey pixels with a grey profile (else grey is written as sRGB). */
  grey: boolean;
  /** It holds 16 bits per sample from a 16-bit input. */
  deep: boolean;
  /** One encode is stopped by libvips' timeout, so a job writing it may run in the main process (in-process.ts). */
  inProcess: boolean;
  /** `format: "auto"` tries it unless `formats` narrows them (PNG only when named there). */
  autoCandidate: boolean;
}

export interface FormatRow {
  /** Its media type: the answer's Content-Type, and its token in Accept. */
  mime: string;
  /** Its name in a sentence ("send JPEG, PNG…"). */
  title: string;
  /** Its first bytes say it is this format (rows are asked in the table's order). */
  magic(head: Buffer): boolean;
  decoder: Decoder;
  /** Its files may hold an animation an output can keep (the frames are counted before any decoder runs). */
  animates: boolean;
  /**
   * Whether a single-frame input of this size may be decoded in the main process: measured bounded there
   * (docs/security.md, "In-process allow-list"). Absent: a job with it always runs in a child.
   */
  inProcess?(input: InputExtent): boolean;
  /** Absent: an input only. */
  output?: OutputRule;
}

/**
 * Most pixels of a JPEG or PNG decoded in-process. Their decoders stream rows, so libvips stops them at its
 * timeout; at 16 MP of noise every allowed job stopped within 0.16 s of a 1 s timeout. Keeps 12 MP phone photos here.
 */
export const IN_PROCESS_MAX_PIXELS = 16_000_000;

/**
 * Most pixels of a single-scan baseline JPEG (what cameras and phones write) decoded in-process: libjpeg hands out
 * each row as it decodes it, so libvips stops it at its timeout and nothing uninterruptible grows with its size. At
 * 40 MP of noise every allowed job stopped within 0.15 s of a 1 s timeout; past IN_PROCESS_MAX_PIXELS only JPEG and
 * PNG outputs stay here (in-process.ts; docs/security.md, with the memory of each).
 */
export const IN_PROCESS_MAX_SINGLE_SCAN_JPEG_PIXELS = 40_000_000;

/**
 * What runs before libvips can stop anything is kept to about 0.1 s of CPU alone, so that on a loaded machine a job
 * still stops within a second of even a short deadline. Most pixels of a (single-frame) WebP decoded in-process:
 * libwebp decodes the whole image in one call, 0.1 s for 1 MP of noise at quality 100 (0.4 s at 4 MP).
 */
export const IN_PROCESS_MAX_WEBP_PIXELS = 1_000_000;

/**
 * Most pixels × scans of a progressive JPEG decoded in-process: libjpeg decodes every scan before the first row
 * comes out, uninterruptibly, 0.12 s for 4 MP of noise with libjpeg's 10 scans (0.45 s at 16 MP).
 */
export const IN_PROCESS_MAX_SCAN_PIXELS = 40_000_000;

/**
 * The AVIF encoder's settings. Chroma 4:2:0: at an equal SSIMULACRA 2, effort 3 with 4:2:0 writes 14 % fewer bytes
 * than effort 2 with sharp's 4:4:4 for 1.0–1.1× its encode CPU, where 4:4:4 at effort 3 costs 1.2–1.3× (BENCHMARKS.md,
 * "Encoder settings").
 */
export function avifOptions(quality: number, effort: number): AvifOptions {
  return { quality, effort, chromaSubsampling: '4:2:0' };
}

const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis']);

/** Each buffer's HEIF kind, read once for the AVIF and HEIC rows' magic (a buffer is one input, never rewritten). */
const heifKinds = new WeakMap<Buffer, 'heic' | 'avif' | undefined>();

/**
 * HEIC or AVIF for a file naming a HEIF brand, else undefined: the primary image's coding decides (a `mif1` file may
 * hold either), its brands only when its boxes cannot be read (the pipeline then says what is wrong).
 */
function heifKind(buf: Buffer): 'heic' | 'avif' | undefined {
  if (heifKinds.has(buf)) return heifKinds.get(buf);
  const brands = heifBrands(buf);
  let kind: 'heic' | 'avif' | undefined;
  if (brands?.some((b) => HEIF_BRANDS.has(b))) {
    try {
      const { codec } = readHeifStructure(buf);
      if (codec === 'hevc') kind = 'heic';
      else if (codec === 'av1') kind = 'avif';
    } catch {
      // unreadable: named by its brands
    }
    kind ??= brands.some((b) => HEIC_BRANDS.has(b)) ? 'heic' : 'avif';
  }
  heifKinds.set(buf, kind);
  return kind;
}

/**
 * The formats, outputs first. Only these reach a decoder (SVG, PDF, HTML, RAW… never do), and the answer's
 * `formats`, the OpenAPI enums and the clients' types list them in this order.
 */
export const FORMATS = {
  jpeg: {
    mime: 'image/jpeg',
    title: 'JPEG',
    magic: (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
    decoder: { by: 'libvips', loader: 'VipsForeignLoadJpeg', reportedAs: 'jpeg' },
    animates: false,
    inProcess: ({ width, height, progressive, scans }) =>
      width * height <=
        (!progressive && scans === 1 ? IN_PROCESS_MAX_SINGLE_SCAN_JPEG_PIXELS : IN_PROCESS_MAX_PIXELS) &&
      (!progressive || width * height * scans <= IN_PROCESS_MAX_SCAN_PIXELS),
    output: {
      accept: 'always',
      preference: 4,
      encode: (image, { quality, jpegQuantTable, pixelsOnly }) =>
        image.jpeg({
          quality,
          ...(jpegQuantTable !== undefined && { quantisationTable: jpegQuantTable }),
          // The second, Huffman-optimising pass changes the size only (1.4 against 2.6 ms of CPU on a 512×128
          // sample, BENCHMARKS.md, the quality search's notes).
          ...(pixelsOnly === true && { optimiseCoding: false }),
        }),
      // Table 2 medians over seven photographs kept apart from the benchmark's ten (corpus Landscape_1, kodim03,
      // paris; mate-backgrounds Wood, YellowFlower, Elephants, GreenTraditional), so the benchmark stays held out.
      // Margin 0.5: the smallest that keeps each of them a point inside the ±3 band (0.25: one at 79.9, 0: 79.5).
      // Tolerance 4: the largest that leaves their scores as with 3 (5 moved them), 1.7 probes on average there.
      lossy: {
        model: { start: (t) => 82 + (t - 82) / 0.6, slope: 0.6, min: 10, max: 98 },
        sampleMargin: 0.5,
        probeTolerance: 4,
        sample: JPEG_WEBP_SAMPLE,
      },
      alpha: false,
      frames: false,
      grey: true,
      deep: false,
      inProcess: true,
      autoCandidate: true,
    },
  },
  png: {
    mime: 'image/png',
    title: 'PNG',
    magic: (b) => b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a,
    decoder: { by: 'libvips', loader: 'VipsForeignLoadPng', reportedAs: 'png' },
    animates: false,
    inProcess: ({ width, height }) => width * height <= IN_PROCESS_MAX_PIXELS,
    output: {
      accept: 'always',
      preference: 3,
      encode: (image) => image.png(),
      alpha: true,
      frames: false,
      grey: true,
      deep: true,
      inProcess: true,
      autoCandidate: false,
    },
  },
  webp: {
    mime: 'image/webp',
    title: 'WebP',
    magic: (b) =>
      b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
    decoder: { by: 'libvips', loader: 'VipsForeignLoadWebp', reportedAs: 'webp' },
    animates: true,
    inProcess: ({ width, height }) => width * height <= IN_PROCESS_MAX_WEBP_PIXELS,
    output: {
      accept: 'named',
      preference: 2,
      encode: (image, { quality, frameTiming }) => image.webp({ quality, ...frameTiming }),
      // Model: medians over the JPEG model's seven photographs. Margin 0.5: of 0, 0.5 and 1, the one that kept all 17
      // photographs of the training and benchmark sets within the band (0: Blinds at 78.8, 1: Aqua at 85.7); on 11
      // photographs used for nothing else, 10 within it. Tolerance 2: the same scores as up to three probes.
      lossy: {
        model: { start: (t) => 86 + (t - 82) / 0.45, slope: 0.45, min: 10, max: 100 },
        sampleMargin: 0.5,
        probeTolerance: 2,
        sample: JPEG_WEBP_SAMPLE,
      },
      // libwebp writes only RGB.
      alpha: true,
      frames: true,
      grey: false,
      deep: false,
      inProcess: true,
      autoCandidate: true,
    },
  },
  avif: {
    mime: 'image/avif',
    title: 'AVIF',
    magic: (b) => heifKind(b) === 'avif',
    decoder: { by: 'libvips', loader: 'VipsForeignLoadHeif', reportedAs: 'heif' },
    animates: false,
    output: {
      accept: 'named',
      preference: 1,
      encode: (image, { quality, avifEffort }) => image.avif(avifOptions(quality, avifEffort)),
      // Model (effort 3, the default AVIF_EFFORT, chroma 4:2:0): effort 3 4:4:4's median over the benchmark
      // photographs (q60) plus the 5 points 4:2:0 needed at effort 2; measured afterwards, q63. Margin 1.5 puts the
      // median of the 17 photographs at the target (without it 1.4 under, and 3 of the 11 held out fell out of the
      // band, down to 77.3; with it 11 of 11). Tolerance 0: its slope is shallow (a 2-point error is 7 quality
      // steps) and it is within the CPU budget, so it keeps the search. BENCHMARKS.md, "Quality".
      lossy: {
        model: { start: (t) => 65 + (t - 82) / 0.3, slope: 0.3, min: 10, max: 100 },
        sampleMargin: 1.5,
        probeTolerance: 0,
        sample: SAMPLE,
        smallestAtTarget: true,
      },
      // The AVIF encoder turns grey into RGB, and writes 8 bits here.
      alpha: true,
      frames: false,
      grey: false,
      deep: false,
      // Its encoder ignores libvips' timeout.
      inProcess: false,
      autoCandidate: true,
    },
  },
  gif: {
    mime: 'image/gif',
    title: 'GIF',
    magic: (b) =>
      b.length >= 6 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a'),
    decoder: { by: 'libvips', loader: 'VipsForeignLoadNsgif', reportedAs: 'gif' },
    animates: true,
  },
  tiff: {
    mime: 'image/tiff',
    title: 'TIFF',
    magic: (b) => b.length >= 4 && (b.readUInt32BE(0) === 0x49492a00 || b.readUInt32BE(0) === 0x4d4d002a),
    decoder: { by: 'libvips', loader: 'VipsForeignLoadTiff', reportedAs: 'tiff' },
    animates: false,
  },
  heic: {
    mime: 'image/heic',
    title: 'HEIC',
    magic: (b) => heifKind(b) === 'heic',
    // libheif in WebAssembly (heif-decode.ts), in the children only; libvips then reads a PNG of its pixels.
    decoder: { by: 'children', reportedAs: 'png', libvipsCompression: 'hevc' },
    animates: false,
  },
} satisfies Record<string, FormatRow>;

export type InputFormat = keyof typeof FORMATS;

type RowsWhere<Shape> = { [K in InputFormat]: (typeof FORMATS)[K] extends Shape ? K : never }[InputFormat];
/** The formats a job writes. */
export type OutputFormat = RowsWhere<{ output: OutputRule }>;
/** The formats a decoder reads (the others are recognised only to be refused by name). */
export type DecodedFormat = Exclude<InputFormat, RowsWhere<{ decoder: { by: 'none' } }>>;
/** The formats decoded only in the killable children (each has its decoder in child-decoders.ts). */
export type ChildDecodedFormat = RowsWhere<{ decoder: { by: 'children' } }>;

const ROWS = Object.entries(FORMATS) as [InputFormat, FormatRow][];

/** The row of a format. */
export function formatRow(format: InputFormat): FormatRow {
  return FORMATS[format];
}

/** The output rule of an output format. */
export function outputRule(format: OutputFormat): OutputRule {
  return FORMATS[format].output;
}

export const OUTPUT_FORMATS = ROWS.flatMap(([format, row]) => (row.output ? [format] : [])) as [
  OutputFormat,
  ...OutputFormat[],
];
export const DECODED_FORMATS = ROWS.flatMap(([format, row]) =>
  row.decoder.by === 'none' ? [] : [format],
) as [DecodedFormat, ...DecodedFormat[]];

/** `format: "auto"`'s candidates unless a top-level `formats` list narrows them. */
export const AUTO_FORMAT_CANDIDATES: readonly OutputFormat[] = OUTPUT_FORMATS.filter(
  (f) => outputRule(f).autoCandidate,
);

/** The outputs by preference (the smaller `preference` first). */
export const PREFERRED_OUTPUTS: readonly OutputFormat[] = [...OUTPUT_FORMATS].sort(
  (a, b) => outputRule(a).preference - outputRule(b).preference,
);

/** The Accept header of a url fetch: the outputs by preference, then any image, then anything. */
export const FETCH_ACCEPT = [
  ...PREFERRED_OUTPUTS.map((f) => FORMATS[f].mime),
  'image/*;q=0.8',
  '*/*;q=0.5',
].join(',');

/** The one output that keeps an animation's frames (planOutput's and f:auto's rule). */
export const FRAMES_OUTPUT: OutputFormat = OUTPUT_FORMATS.find((f) => outputRule(f).frames)!;

/** What a job writes when no format is named and the input is not an output format: lossless, keeping alpha. */
export const FALLBACK_OUTPUT: OutputFormat = 'png';

/** The output every browser shows (`accept: 'always'`): one keeping alpha for an image with alpha, else a lossy one. */
export function legacyOutput(hasAlpha: boolean): OutputFormat {
  const shown = OUTPUT_FORMATS.filter((f) => outputRule(f).accept === 'always');
  return shown.find((f) => (hasAlpha ? outputRule(f).alpha : outputRule(f).lossy !== undefined)) ?? shown[0]!;
}

/**
 * Recognises the accepted input formats from their first bytes. Anything else (SVG, PDF, HTML, RAW…)
 * never reaches a decoder, so libvips' other loaders cannot be reached by a client.
 */
export function sniffImageFormat(buf: Buffer): InputFormat | undefined {
  return ROWS.find(([, row]) => row.magic(buf))?.[0];
}

/** `format` absent: the input's format when it is an output format, else png. */
export function defaultOutputFormat(input: InputFormat): OutputFormat {
  const row: FormatRow = FORMATS[input];
  return row.output ? (input as OutputFormat) : FALLBACK_OUTPUT;
}

/**
 * The libvips loaders of the accepted inputs. Every other loader (SVG, PDF, ImageMagick, OpenSlide, raw…) is
 * blocked at start, so a file that fools the sniffer still cannot reach them.
 */
export const ACCEPTED_LOADERS: readonly string[] = [
  ...new Set(ROWS.flatMap(([, row]) => (row.decoder.by === 'libvips' ? [row.decoder.loader] : []))),
];

/** True when a decoder reads the format (the others are recognised only to be refused by name). */
export function isDecoded(format: InputFormat): format is DecodedFormat {
  return formatRow(format).decoder.by !== 'none';
}

/** True when the format is decoded only in the killable children, by its entry in child-decoders.ts. */
export function isChildDecoded(format: InputFormat): format is ChildDecodedFormat {
  return formatRow(format).decoder.by === 'children';
}

/**
 * The format decoded in the children whose coding libvips' own loader reports as `compression` (its row's
 * `libvipsCompression`), in a file sniffed as another row because its structure could not be read; else undefined.
 */
export function childCodingReadByLibvips(compression: string | undefined): ChildDecodedFormat | undefined {
  if (compression === undefined) return undefined;
  const format = ROWS.find(
    ([, { decoder }]) => decoder.by === 'children' && decoder.libvipsCompression === compression,
  )?.[0];
  return format !== undefined && isChildDecoded(format) ? format : undefined;
}

/** Why an input no decoder reads is refused before any decoder runs (422). No row is refused so today. */
export function refusal(format: Exclude<InputFormat, DecodedFormat>): string {
  const { decoder }: FormatRow = FORMATS[format];
  return decoder.by === 'none' ? decoder.refused : '';
}

/** True when the decoder that read the bytes is the one their magic bytes announced. */
export function decodedAsSniffed(sniffed: InputFormat, decodedFormat: string | undefined): boolean {
  const { decoder } = formatRow(sniffed);
  return decoder.by !== 'none' && decoder.reportedAs === decodedFormat;
}

/** Whether an output keeps the source's alpha channel. */
export function keepsAlpha(source: { hasAlpha: boolean }, format: OutputFormat): boolean {
  return source.hasAlpha && outputRule(format).alpha;
}
