// Overlays (watermarks) stored per account: the image and what is listed about it. Every instance reads them here.
import { claimName, deleteNamed, type PutNamedOutcome } from './named-per-account.ts';
import type { Db } from './schema.ts';

export interface OverlayUpload {
  accountId: string;
  name: string;
  image: Uint8Array;
  format: 'png' | 'webp';
  width: number;
  height: number;
  contentHash: string;
  now: string;
}

export interface OverlaySummary {
  name: string;
  format: string;
  bytes: number;
  width: number;
  height: number;
  contentHash: string;
  createdAt: string;
  updatedAt: string;
}

export interface StoredOverlay extends OverlaySummary {
  image: Buffer;
}

const SUMMARY_COLUMNS = [
  'name',
  'format',
  'bytes',
  'width',
  'height',
  'content_hash as contentHash',
  'created_at as createdAt',
  'updated_at as updatedAt',
] as const;

/** Stores the overlay under its name, replacing the image of an existing name, or refuses a new name past the limit. */
export async function putOverlay(
  db: Db,
  upload: OverlayUpload,
  maxPerAccount: number,
): Promise<PutNamedOutcome> {
  return db.transaction().execute(async (trx) => {
    const outcome = await claimName(trx, 'overlays', upload.accountId, upload.name, maxPerAccount);
    if (outcome === 'limit') return outcome;
    const image = {
      image: upload.image,
      format: upload.format,
      bytes: upload.image.byteLength,
      width: upload.width,
      height: upload.height,
      content_hash: upload.contentHash,
      updated_at: upload.now,
    };
    await trx
      .insertInto('overlays')
      .values({ account_id: upload.accountId, name: upload.name, created_at: upload.now, ...image })
      .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet(image))
      .execute();
    return outcome;
  });
}

/** The account's overlays by name, without their images. */
export async function listOverlays(db: Db, accountId: string): Promise<OverlaySummary[]> {
  return db
    .selectFrom('overlays')
    .select(SUMMARY_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('name')
    .execute();
}

/** One overlay of the account with its image, or undefined: another account's name is never found. */
export async function findOverlay(
  db: Db,
  accountId: string,
  name: string,
): Promise<StoredOverlay | undefined> {
  const row = await db
    .selectFrom('overlays')
    .select([...SUMMARY_COLUMNS, 'image'])
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) return undefined;
  const image = Buffer.from(row.image.buffer, row.image.byteOffset, row.image.byteLength);
  return { ...row, image };
}

/**
 * The content hash of the account's overlay of that name (a delivery derivative's cache key names it), without
 * reading the image; undefined when the account has none of that name.
 */
export async function findOverlayHash(db: Db, accountId: string, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('overlays')
    .select('content_hash')
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.content_hash;
}

/** Deletes the account's overlay of that name; false when it had none. */
export async function deleteOverlay(db: Db, accountId: string, name: string): Promise<boolean> {
  return deleteNamed(db, 'overlays', accountId, name);
}
