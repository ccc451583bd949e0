// owns: what is composited onto the finished pixels, after every tone operation and before the encode: the account's
// overlay (its schema, step and registry entry; its placement is ../overlay.ts).
import { overlaySchema as overlayFields } from '../overlay.ts';
import { compositeOnto, type Entry, type FieldsOf, type Step } from './entry.ts';

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

export const OVERLAY = { overlay };

declare module './entry.ts' {
  interface Operations extends FieldsOf<typeof OVERLAY> {}
}
