// owns: overlays (an account's stored watermark): what an upload must be, where the `overlay` operation places one
// on the output, and its pixels prepared for that place (scaled, opacity applied) before the sharp pipeline runs.
import sharp, { type OverlayOptions as SharpComposite } from 'sharp';
import { z } from 'zod';
import type { ApiError } from '../errors.ts';
import { invalidOperations } from './errors.ts';

/** An overlay's name: what PUT /v1/overlays/{name} stores and `overlay.name` (or the URL's `overlay:`) names. */
export const OVERLAY_NAME = /^[a-z0-9-]{1,40}$/;
export const OVERLAY_NAME_RULE = '1 to 40 characters of a-z, 0-9 and -';
/** 1 MB (1,048,576 bytes) of PNG or WebP. */
export const MAX_OVERLAY_BYTES = 1024 * 1024;
/** 4 MP: width × height of the overlay at most 4,000,000. */
export const MAX_OVERLAY_PIXELS = 4_000_000;
export const MAX_OVERLAYS_PER_ACCOUNT = 20;

export const GRAVITIES = [
  'center',
  'north',
  'northeast',
  'east',
  'southeast',
  'south',
  'southwest',
  'west',
  'northwest',
] as const;
export type Gravity = (typeof GRAVITIES)[number];
export const DEFAULT_GRAVITY: Gravity = 'southeast';
/** The widest margin accepted, in pixels: more than any output is wide (MAX_RESIZE_DIMENSION is at most 16383). */
export const MAX_OVERLAY_MARGIN = 16384;

export interface OverlayOptions {
  name: string;
  gravity?: Gravity | undefined;
  opacity?: number | undefined;
  width?: number | undefined;
  margin?: number | undefined;
}

const GRAVITY_ERROR = `must be one of ${GRAVITIES.join(', ')}`;

/** The JSON form of `overlay`: {"name", "gravity", "opacity", "width", "margin"}; only name is required. */
export function overlaySchema() {
  const fraction = (error: string) => z.number({ error }).min(0, { error }).max(1, { error });
  const share = 'must be a number above 0 and at most 1 (a share of the output width)';
  return z
    .strictObject(
      {
        name: z
          .string({ error: `must be an overlay name: ${OVERLAY_NAME_RULE}` })
          .regex(OVERLAY_NAME, { error: `must be an overlay name: ${OVERLAY_NAME_RULE}` })
          .describe('The name the overlay was stored under (PUT /v1/overlays/{name}).'),
        gravity: z
          .enum(GRAVITIES, { error: GRAVITY_ERROR })
          .optional()
          .describe('Where it sits: center or a side or corner; default southeast.'),
        opacity: fraction('must be a number from 0 to 1')
          .optional()
          .describe('0 (invisible) to 1 (as stored, the default): multiplies its alpha.'),
        width: z
          .number({ error: share })
          .gt(0, { error: share })
          .max(1, { error: share })
          .optional()
          .describe("Its width as a share of the output's width (height follows); default: its own size."),
        margin: z
          .number({ error: `must be an integer from 0 to ${MAX_OVERLAY_MARGIN}` })
          .int({ error: `must be an integer from 0 to ${MAX_OVERLAY_MARGIN}` })
          .min(0, { error: `must be an integer from 0 to ${MAX_OVERLAY_MARGIN}` })
          .max(MAX_OVERLAY_MARGIN, { error: `must be an integer from 0 to ${MAX_OVERLAY_MARGIN}` })
          .optional()
          .describe('Pixels between it and the edges its gravity touches (not used by center); default 0.'),
      },
      { error: 'must be an object such as {"name": "logo"}' },
    )
    .optional()
    .describe(
      'Places an overlay the account stored (PUT /v1/overlays/{name}) on the output, after every other pixel ' +
        'operation and before the encode. One larger than the output (less its margins) is scaled down to fit.',
    );
}

export interface Size {
  width: number;
  height: number;
}

export interface Placement {
  left: number;
  top: number;
  width: number;
  height: number;
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

/**
 * Where the overlay goes on an output of `output` size: its size (`width` share of the output's width, else its
 * own; scaled down, aspect kept, to fit inside the output less its margins), then its corner from the gravity,
 * `margin` pixels from each edge the gravity touches. Always inside the output.
 */
export function overlayPlacement(output: Size, overlay: Size, options: OverlayOptions): Placement {
  const margin = options.margin ?? 0;
  const gravity = options.gravity ?? DEFAULT_GRAVITY;
  let width = options.width === undefined ? overlay.width : output.width * options.width;
  let height = (width * overlay.height) / overlay.width;
  const room = {
    width: Math.max(1, output.width - 2 * margin),
    height: Math.max(1, output.height - 2 * margin),
  };
  const k = Math.min(1, room.width / width, room.height / height);
  width = clamp(Math.round(width * k), 1, output.width);
  height = clamp(Math.round(height * k), 1, output.height);
  const along = (side: number, size: number, start: boolean, end: boolean) =>
    clamp(start ? margin : end ? side - size - margin : Math.round((side - size) / 2), 0, side - size);
  return {
    width,
    height,
    left: along(output.width, width, gravity.endsWith('west'), gravity.endsWith('east')),
    top: along(output.height, height, gravity.startsWith('north'), gravity.startsWith('south')),
  };
}

/** The overlay as the composite step takes it: one composite per frame (sharp stacks an animation's frames). */
export interface PreparedOverlay {
  name: string;
  composites: SharpComposite[];
}

/**
 * Scales the stored overlay to its placement on each `frames` frame of `output` size and multiplies its alpha by
 * the opacity. Runs before the job's sharp pipeline, which is built synchronously step by step.
 */
export async function prepareOverlay(
  image: Uint8Array,
  output: Size,
  options: OverlayOptions,
  frames = 1,
): Promise<PreparedOverlay> {
  const overlay = sharp(image, { limitInputPixels: MAX_OVERLAY_PIXELS, failOn: 'warning' });
  const meta = await overlay.metadata();
  const placement = overlayPlacement(output, { width: meta.width, height: meta.height }, options);
  const pixels = await overlay
    .ensureAlpha()
    .resize(placement.width, placement.height, { fit: 'fill' })
    .toColourspace('srgb')
    .raw()
    .toBuffer();
  const opacity = options.opacity ?? 1;
  if (opacity < 1) {
    for (let i = 3; i < pixels.length; i += 4) pixels[i] = Math.round((pixels[i] as number) * opacity);
  }
  const raw = { width: placement.width, height: placement.height, channels: 4 as const };
  const composites = Array.from({ length: frames }, (_, frame) => ({
    input: pixels,
    raw,
    left: placement.left,
    top: placement.top + frame * output.height,
  }));
  return { name: options.name, composites };
}

export function unknownOverlay(name: string): ApiError {
  return invalidOperations(
    `operations.overlay.name ${JSON.stringify(name)} is not an overlay of this account (GET /v1/overlays lists them)`,
  );
}
