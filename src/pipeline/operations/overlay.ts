// owns: what is composited onto the finished pixels, after every tone operation and before the encode: rounded
// corners (radius) and the account's overlay, each its schema, step and registry entry (the overlay's placement is
// ../overlay.ts).
import type { OverlayOptions } from 'sharp';
import { z } from 'zod';
import { parseColour, WHITE } from '../colour.ts';
import { outputRule } from '../formats.ts';
import { overlaySchema as overlayFields } from '../overlay.ts';
import { compositeOnto, type Entry, type FieldsOf, type SchemaLimits, type Step } from './entry.ts';

/** `radius: "max"`: each corner's curve spans half the side, an ellipse (a circle when the output is square). */
export const RADIUS_MAX = 'max';

const radiusSchema = ({ maxDimension }: SchemaLimits) => {
  const error = `must be an integer from 1 to ${maxDimension} or "${RADIUS_MAX}"`;
  return z
    .union(
      [
        z.number({ error }).int({ error }).min(1, { error }).max(maxDimension, { error }),
        z.literal(RADIUS_MAX),
      ],
      {
        error,
      },
    )
    .optional()
    .describe(
      `Rounded corners: their radius in pixels (at most half the output's shorter side), or "${RADIUS_MAX}" (an ellipse, a circle when square). The cut corners are transparent where the output keeps alpha, else background (default white).`,
    )
    .meta({ examples: [24, RADIUS_MAX] });
};

/**
 * The corners' mask of a frame, as grey and alpha pixels: alpha is the share of each pixel inside the rounded
 * rectangle whose corners are ellipses of radii rx, ry (anti-aliased over one pixel), 255 away from the corners.
 * Only the corners are computed; the other pixels keep the fill.
 */
export function cornerMask(width: number, height: number, rx: number, ry: number): Buffer {
  const mask = Buffer.alloc(width * height * 2, Buffer.from([0, 255]));
  for (let y = 0; y < Math.ceil(ry); y++) {
    const dy = ry - (y + 0.5);
    if (dy <= 0) continue;
    for (let x = 0; x < Math.ceil(rx); x++) {
      const dx = rx - (x + 0.5);
      if (dx <= 0) continue;
      // The distance to the ellipse, from its implicit form over its gradient (exact for a circle).
      const g = Math.hypot(dx / rx, dy / ry);
      const distance = ((g - 1) * g) / Math.hypot(dx / (rx * rx), dy / (ry * ry));
      const alpha = Math.round(255 * Math.min(1, Math.max(0, 0.5 - distance)));
      if (alpha === 255) continue;
      for (const [px, py] of [
        [x, y],
        [width - 1 - x, y],
        [x, height - 1 - y],
        [width - 1 - x, height - 1 - y],
      ] as const) {
        mask[(py * width + px) * 2 + 1] = alpha;
      }
    }
  }
  return mask;
}

/**
 * Cuts the corners of every frame (the mask is tiled down an animation's stacked frames): transparent where the
 * output keeps alpha, else background laid under them, as the encode's flatten (which sharp runs before any
 * composite) would have.
 */
const radiusStep: Step = (ctx) => {
  const { radius } = ctx.ops;
  if (radius === undefined) return;
  const { width, height } = ctx.source;
  const capped = (side: number) =>
    radius === RADIUS_MAX ? side / 2 : Math.min(radius, width / 2, height / 2);
  const frame = { tile: true, left: 0, top: 0 };
  const images: OverlayOptions[] = [
    {
      input: cornerMask(width, height, capped(width), capped(height)),
      raw: { width, height, channels: 2 },
      blend: 'dest-in',
      ...frame,
    },
  ];
  if (outputRule(ctx.format).alpha) {
    ctx.source = { ...ctx.source, hasAlpha: true };
  } else {
    const fill = ctx.ops.background === undefined ? WHITE : parseColour(ctx.ops.background);
    images.push({
      input: { create: { width, height, channels: 4, background: { ...fill, alpha: 1 } } },
      blend: 'dest-over',
      ...frame,
    });
  }
  compositeOnto(ctx, images);
  ctx.applied.push('radius');
};

// Not on the in-process allow-list (no inProcess): its mask and composite were not measured there.
const radius: Entry<typeof radiusSchema> = {
  schema: radiusSchema,
  url: [{ name: 'radius', path: ['radius'], kind: 'integer-or-word' }],
  tokens: ['radius'],
  phase: 'tone',
  stepName: 'radius',
  apply: radiusStep,
};

const overlaySchema = () =>
  overlayFields().meta({ examples: [{ name: 'logo', gravity: 'southeast', width: 0.2, margin: 16 }] });

/** After every other pixel operation and before the encode: the account's overlay, placed (overlay.ts). */
const overlayStep: Step = (ctx) => {
  if (!ctx.overlay) return;
  compositeOnto(ctx, ctx.overlay.composites);
  ctx.applied.push(`overlay=${ctx.overlay.name}`);
};

// Not on the in-process allow-list (no inProcess): the overlay's decode and composite were not measured there.
const overlay: Entry<typeof overlaySchema> = {
  schema: overlaySchema,
  url: [
    { name: 'overlay', path: ['overlay', 'name'], kind: 'word', client: 'overlay' },
    { name: 'overlay_gravity', path: ['overlay', 'gravity'], kind: 'word', client: 'overlayGravity' },
    {
      name: 'overlay_opacity',
      path: ['overlay', 'opacity'],
      kind: 'number-or-word',
      client: 'overlayOpacity',
    },
    { name: 'overlay_width', path: ['overlay', 'width'], kind: 'number-or-word', client: 'overlayWidth' },
    { name: 'overlay_margin', path: ['overlay', 'margin'], kind: 'integer-or-word', client: 'overlayMargin' },
  ],
  tokens: ['overlay'],
  phase: 'tone',
  stepName: 'overlay',
  apply: overlayStep,
};

export const OVERLAY = { radius, overlay };

declare module './entry.ts' {
  interface Operations extends FieldsOf<typeof OVERLAY> {}
}
