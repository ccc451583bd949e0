// Static list of migrations (no filesystem glob): add a file NNN-name.ts and one line here.
import type { Migration, MigrationProvider } from 'kysely';
import * as m001 from './001-init.ts';
import * as m002 from './002-quota-reservations.ts';

const MIGRATIONS: Record<string, Migration> = {
  '001-init': m001,
  '002-quota-reservations': m002,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
