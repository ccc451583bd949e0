// owns: what is composited onto the finished pixels, after every tone operation and before the encode: rounded
// corners (radius) and the account's overlay, each its schema, step and registry entry (the overlay's placement is
// ../overlay.ts).
import type { OverlayOptions } from 'sharp';
import { z } from 'zod';
import { flatteningColour } from '../colour.ts';
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

/** The four corners' patches a rounding cuts, each ceil(rx) × ceil(ry) grey and alpha pixels. */
export interface CornerCuts {
  width: number;
  height: number;
  /** Top-left, top-right, bottom-left, bottom-right. */
  corners: [Buffer, Buffer, Buffer, Buffer];
}

/**
 * What rounding cuts from a frame's four corners (dest-out reads the alpha only): in each corner's patch, alpha is
 * the share of each pixel outside the ellipse of radii rx, ry that ends the corner, anti-aliased over one pixel.
 * Per row, the pixels well outside the curve are cut whole and those well inside are left; only the few near the
 * curve are computed, and written to each corner mirrored.
 */
export function cornerCuts(rx: number, ry: number): CornerCuts {
  const width = Math.ceil(rx);
  const height = Math.ceil(ry);
  const corners = [0, 1, 2, 3].map(() => Buffer.alloc(width * height * 2)) as CornerCuts['corners'];
  /** How far from the corner's centre column the curve crosses the row `dy` from its centre row (0 beyond it). */
  const curveAt = (dy: number) => (dy >= ry ? 0 : rx * Math.sqrt(1 - (dy / ry) ** 2));
  for (let y = 0; y < height; y++) {
    const dy = ry - (y + 0.5);
    if (dy <= 0) continue;
    // Byte offsets of this row in the top patches and in the bottom ones (mirrored top-bottom).
    const rows = [y * width * 2, y * width * 2, (height - 1 - y) * width * 2, (height - 1 - y) * width * 2];
    // A pixel more than one pixel outside the curve is cut whole; more than one inside, it is kept whole.
    const outsideEnd = Math.min(width, Math.max(0, Math.ceil(rx - 0.5 - (curveAt(Math.max(0, dy - 1)) + 1))));
    const insideStart = Math.min(width, Math.max(0, Math.floor(rx - 0.5 - (curveAt(dy + 1) - 1)) + 1));
    corners.forEach((corner, i) => {
      const row = rows[i]!;
      if (i % 2 === 0) corner.fill(255, row, row + outsideEnd * 2);
      else corner.fill(255, row + (width - outsideEnd) * 2, row + width * 2);
    });
    for (let x = outsideEnd; x < insideStart; x++) {
      const dx = rx - (x + 0.5);
      if (dx <= 0) continue;
      // The distance to the ellipse, from its implicit form over its gradient (exact for a circle).
      const g = Math.hypot(dx / rx, dy / ry);
      const distance = ((g - 1) * g) / Math.hypot(dx / (rx * rx), dy / (ry * ry));
      const alpha = Math.round(255 * Math.min(1, Math.max(0, 0.5 + distance)));
      corners.forEach((corner, i) => {
        corner[rows[i]! + (i % 2 === 0 ? x : width - 1 - x) * 2 + 1] = alpha;
      });
    }
  }
  return { width, height, corners };
}

/**
 * Cuts the four corners of every frame (dest-out: only the corners' patches are made, not a mask of the whole
 * image): transparent where the output keeps alpha, else background laid under them, as the encode's flatten
 * (which sharp runs before any composite) would have.
 */
const radiusStep: Step = (ctx) => {
  const { radius } = ctx.ops;
  if (radius === undefined) return;
  const { width, height } = ctx.source;
  const frames = ctx.frames ?? 1;
  const capped = (side: number) =>
    radius === RADIUS_MAX ? side / 2 : Math.min(radius, width / 2, height / 2);
  const cuts = cornerCuts(capped(width), capped(height));
  const raw = { width: cuts.width, height: cuts.height, channels: 2 as const };
  // Where each corner's patch sits on a frame: top-left, top-right, bottom-left, bottom-right.
  const [right, bottom] = [width - cuts.width, height - cuts.height];
  const places = [
    [0, 0],
    [right, 0],
    [0, bottom],
    [right, bottom],
  ] as const;
  const images: OverlayOptions[] = Array.from({ length: frames }, (_, frame) =>
    cuts.corners.map((input, i) => ({
      input,
      raw,
      left: places[i]![0],
      top: places[i]![1] + frame * height,
      blend: 'dest-out' as const,
    })),
  ).flat();
  if (outputRule(ctx.format).alpha) {
    ctx.source = { ...ctx.source, hasAlpha: true };
  } else {
    images.push({
      input: {
        create: {
          width,
          height: height * frames,
          channels: 4,
          background: flatteningColour(ctx.ops.background),
        },
      },
      blend: 'dest-over',
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
