// Static list of migrations (no filesystem glob): add a file NNN-name.ts and one line here.
import type { Migration, MigrationProvider } from 'kysely';
import * as m001 from './001-init.ts';
import * as m002 from './002-billing.ts';
import * as m003 from './003-quota-reservations.ts';
import * as m004 from './004-mail-outbox-daily-usage.ts';
import * as m005 from './005-checkout-sessions.ts';
import * as m006 from './006-subscriptions.ts';
import * as m007 from './007-delivery.ts';
import * as m008 from './008-instances.ts';
import * as m009 from './009-quota-reservations-one-page.ts';
import * as m010 from './010-plans-and-checkouts.ts';
import * as m011 from './011-delivery-charges-purges.ts';
import * as m012 from './012-overlays.ts';
import * as m013 from './013-delivery-makes-failures.ts';
import * as m014 from './014-presets-delivery-policies.ts';
import * as m015 from './015-delivery-sources.ts';

const MIGRATIONS: Record<string, Migration> = {
  '001-init': m001,
  '002-billing': m002,
  '003-quota-reservations': m003,
  '004-mail-outbox-daily-usage': m004,
  '005-checkout-sessions': m005,
  '006-subscriptions': m006,
  '007-delivery': m007,
  '008-instances': m008,
  '009-quota-reservations-one-page': m009,
  '010-plans-and-checkouts': m010,
  '011-delivery-charges-purges': m011,
  '012-overlays': m012,
  '013-delivery-makes-failures': m013,
  '014-presets-delivery-policies': m014,
  '015-delivery-sources': m015,
};

/** Names of every migration, in order: what a fully migrated store has applied. */
export const MIGRATION_NAMES = Object.keys(MIGRATIONS).sort();

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
