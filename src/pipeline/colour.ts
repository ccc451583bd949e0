// owns: what a job does with its input's colour (colour space, bit depth, ICC profile). One rule for every path: the
// plain pipeline, the output search's intermediate and each of its candidates, placeholders and delivery URLs all ask
// colourRoute, so a CMYK, grey or 16-bit input comes out alike whichever path it takes.
import type { Metadata, Sharp } from 'sharp';
import { outputRule, type OutputFormat } from './formats.ts';

/** The input's colour as its header says: libvips' interpretation (`srgb`, `cmyk`, `b-w`, `grey16`, `rgb16`…). */
export interface InputColour {
  space: string;
  /** It embeds an ICC profile. Only a grey input's route depends on it (colour.ts). */
  hasProfile: boolean;
}

export const WHITE = { r: 255, g: 255, b: 255, alpha: 1 };
export const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };

export interface Colour {
  r: number;
  g: number;
  b: number;
  alpha: number;
}

/** `#rgb`, `#rrggbb` or `#rrggbbaa` (the schema checked the spelling) as sharp's colour object. */
export function parseColour(hex: string): Colour {
  const digits = hex.slice(1);
  const full = digits.length === 3 ? [...digits].map((d) => d + d).join('') : digits;
  const byte = (i: number) => parseInt(full.slice(i * 2, i * 2 + 2), 16);
  return { r: byte(0), g: byte(1), b: byte(2), alpha: full.length === 8 ? byte(3) / 255 : 1 };
}

/**
 * What alpha is flattened onto for an output without alpha: `background` as it shows on a white page (its own alpha
 * blended onto white), so a transparent fill comes out white in JPEG, never black; white when none is given.
 */
export function flatteningColour(background: string | undefined): Colour {
  if (background === undefined) return WHITE;
  const { r, g, b, alpha } = parseColour(background);
  const overWhite = (v: number) => Math.round(v * alpha + 255 * (1 - alpha));
  return { r: overWhite(r), g: overWhite(g), b: overWhite(b), alpha: 1 };
}

/** The input's colour from its header. */
export function inputColour(meta: Pick<Metadata, 'space' | 'icc'>): InputColour {
  return { space: meta.space ?? 'srgb', hasProfile: meta.icc !== undefined };
}

/** Where the pixels are written: an output format, or the output search's lossless intermediate. */
export type ColourTarget = OutputFormat | 'intermediate';

/** The operations' fields that can put colour into a grey image (the operation entries import this module: no cycle). */
interface ColourOperations {
  overlay?: unknown;
  background?: string | undefined;
}

export interface ColourRoute {
  /** The interpretation the pixels are written in: 8-bit sRGB or grey, or their 16-bit forms. */
  space: 'srgb' | 'rgb16' | 'b-w' | 'grey16';
  /**
   * `input`: the pixels keep their values and the input's own profile goes with them (none if it has none);
   * `srgb`: they are converted from the input's profile (a CMYK input without one: libvips' CMYK profile) to sRGB
   * and tagged with sRGB's.
   */
  profile: 'input' | 'srgb';
}

/**
 * Where grey pixels keep a grey profile: the intermediate and the outputs that hold grey (formats.ts, `grey`); the
 * others get the grey converted to sRGB (a grey profile on RGB pixels would be wrong).
 */
const holdsGrey = (target: ColourTarget) => target === 'intermediate' || outputRule(target).grey;
/** Where a 16-bit input stays 16 bits per sample: the intermediate and the outputs that hold them (`deep`). */
const holdsDeep = (target: ColourTarget) => target === 'intermediate' || outputRule(target).deep;

const isGrey = (space: string) => space === 'b-w' || space === 'grey16';

/** True when an operation puts colour into the pixels: an overlay, or a fill that is not grey. */
function addsColour(ops: ColourOperations): boolean {
  if (ops.overlay !== undefined) return true;
  if (ops.background === undefined) return false;
  const { r, g, b } = parseColour(ops.background);
  return r !== g || g !== b;
}

/**
 * The colour route of a job's pixels to `target`. CMYK: converted to sRGB with its own profile (no output carries
 * CMYK), tagged sRGB. Grey: stays grey with its profile where the output holds grey and no operation adds colour,
 * else sRGB (converted with its profile and tagged sRGB when it has one). 16 bits stay 16 where the output holds
 * them (PNG). Everything else keeps its pixel values and its profile.
 */
export function colourRoute(input: InputColour, target: ColourTarget, ops: ColourOperations): ColourRoute {
  if (input.space === 'cmyk') return { space: 'srgb', profile: 'srgb' };
  const deep = holdsDeep(target) && (input.space === 'rgb16' || input.space === 'grey16');
  if (isGrey(input.space) && holdsGrey(target) && !addsColour(ops)) {
    return { space: deep ? 'grey16' : 'b-w', profile: 'input' };
  }
  const profile = isGrey(input.space) && input.hasProfile ? 'srgb' : 'input';
  return { space: deep ? 'rgb16' : 'srgb', profile };
}

/** Asks sharp for the route, and for every other piece of metadata too when `keepAll` (strip false). */
export function applyColourRoute(image: Sharp, route: ColourRoute, keepAll: boolean): void {
  image.toColourspace(route.space);
  if (route.profile === 'srgb') image.withIccProfile('srgb');
  else image.keepIccProfile();
  if (keepAll) image.keepMetadata();
}
