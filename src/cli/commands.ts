// The CLI commands: thin calls into the store and accounts modules, each opening and closing the store.
import type { Config, Tier } from '../config.ts';
import { replaceAccountKeyReporting, type RevokedKey } from '../accounts/key-issuer.ts';
import { hashApiKey, keyPrefix } from '../accounts/api-key.ts';
import { DEV_ACCOUNT_EMAIL } from '../accounts/dev-key.ts';
import { quotaLimitForTier, remainingUnits, usageMonth } from '../accounts/quota.ts';
import { migrateStore, openStore } from '../store/db.ts';
import { sqliteFileOf } from '../serve-lock.ts';
import { existsSync } from 'node:fs';
import type { Db } from '../store/schema.ts';
import { emailKey, findAccountByEmail, findOrCreateAccount } from '../store/accounts.ts';
import { grantOperatorTier } from '../billing/events.ts';
import { hasActiveKey, revokeActiveKey } from '../store/keys.ts';
import { findUsage } from '../store/usage.ts';

/** A failure the operator caused (e.g. unknown e-mail): message on stderr, exit code as the contract says. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Read-only commands (show, revoke) never create a database: a missing SQLite file is an operator mistake. */
function requireExistingDatabase(config: Config): void {
  const file = sqliteFileOf(config.databaseUrl);
  if (file && !existsSync(file)) {
    throw new CliError(
      `no database at ${file} (set DATA_DIR or DATABASE_URL to the server's, or run imgpipe migrate to create one)`,
      1,
    );
  }
}

async function withStore<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  const store = openStore(config.databaseUrl, {
    poolSize: 2,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
  });
  try {
    await migrateStore(store.db);
    return await fn(store.db);
  } finally {
    await store.close();
  }
}

export function migrate(config: Config): Promise<void> {
  return withStore(config, async () => {});
}

/**
 * What `keys create` tells the operator on stderr (stdout is the key alone): which key it revoked, told by when it
 * was made (keys are stored as hashes) or as the DEV_KEY of this environment; and, for dev@localhost, that a server
 * with DEV_KEY set makes DEV_KEY its key again at its next start.
 */
export function createKeyNotices(
  email: string,
  revoked: RevokedKey | undefined,
  devKey: string | undefined,
): string[] {
  const notices: string[] = [];
  if (revoked) {
    const which =
      devKey && revoked.keyHash === hashApiKey(devKey)
        ? `its DEV_KEY ${keyPrefix(devKey)}, made ${revoked.createdAt}`
        : `made ${revoked.createdAt}`;
    notices.push(`revoked the active key of ${email} (${which}); the new key is on stdout`);
  }
  if (emailKey(email) === emailKey(DEV_ACCOUNT_EMAIL)) {
    notices.push(
      `a server started with DEV_KEY set makes DEV_KEY the key of ${DEV_ACCOUNT_EMAIL} again at its next start, revoking this new one`,
    );
  }
  return notices;
}

export function createKey(
  config: Config,
  email: string,
  tier: Tier,
): Promise<{ key: string; notices: string[] }> {
  return withStore(config, async (db) => {
    const account = await findOrCreateAccount(db, email, tier);
    await grantOperatorTier(db, account.id, tier);
    const { key, revoked } = await replaceAccountKeyReporting(db, account.id);
    return { key, notices: createKeyNotices(account.email, revoked, config.devKey) };
  });
}

async function requireAccount(db: Db, email: string) {
  const account = await findAccountByEmail(db, email);
  if (!account) throw new CliError(`no account for ${email}`, 1);
  return account;
}

export function revokeKey(config: Config, email: string): Promise<string> {
  requireExistingDatabase(config);
  return withStore(config, async (db) => {
    const account = await requireAccount(db, email);
    const revoked = await revokeActiveKey(db, account.id);
    return revoked ? `revoked the active key of ${account.email}` : `${account.email} had no active key`;
  });
}

export function showAccount(config: Config, email: string): Promise<string> {
  requireExistingDatabase(config);
  return withStore(config, async (db) => {
    const account = await requireAccount(db, email);
    const month = usageMonth(new Date());
    const used = await findUsage(db, account.id, month);
    const limit = quotaLimitForTier(config, account.tier);
    return [
      `email: ${account.email}`,
      `tier: ${account.tier}`,
      `key: ${(await hasActiveKey(db, account.id)) ? 'active' : 'none'}`,
      `usage ${month}: ${used} of ${limit} (${remainingUnits(limit, used)} remaining)`,
    ].join('\n');
  });
}
