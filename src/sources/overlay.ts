// owns: the stored overlay source: an account's overlay image (PUT /v1/overlays/{name}) read from the store by name,
// of that account only; and its content hash, which names it in a delivery derivative.
import { MAX_OVERLAY_BYTES, unknownOverlay } from '../pipeline/overlay.ts';
import { findOverlay, findOverlayHash } from '../store/overlays.ts';
import type { Db } from '../store/schema.ts';
import type { ImageSource } from './source.ts';

export interface OverlayRef {
  kind: 'overlay';
  name: string;
}

/** Another account's name, or a deleted one, is invalid_operations like any unknown value. */
export const overlaySource: ImageSource<OverlayRef> = {
  kind: 'overlay',
  maxBytes: () => MAX_OVERLAY_BYTES,
  cost: 'nothing',
  async read(ref, deps, { account }) {
    const stored = await findOverlay(deps.store.db, account, ref.name);
    if (!stored) throw unknownOverlay(ref.name);
    return stored.image;
  },
};

/** The content hash of the account's overlay `name` (invalid_operations when unknown). */
export async function storedOverlayHash(db: Db, account: string, name: string): Promise<string> {
  const hash = await findOverlayHash(db, account, name);
  if (hash === undefined) throw unknownOverlay(name);
  return hash;
}
