// owns: the one mail a paid checkout sends to an account that existed before it (docs/accounts.md, "Plans and checkouts"): what was
// bought, how to cancel it in the portal, and a key link (as recovery sends), since its key page shows no key.
import { generateMagicToken, hashMagicToken } from '../accounts/signup.ts';
import { checkoutMail, verifyLink } from '../mail/templates.ts';
import { findAccountById } from '../store/accounts.ts';
import { insertOutboxMail } from '../store/outbox.ts';
import { insertMagicToken } from '../store/tokens.ts';
import type { Config } from '../config.ts';
import type { Db } from '../store/schema.ts';
import type { PaidTier } from './tiers.ts';

export interface CheckoutMailDeps {
  db: Db;
  config: Pick<Config, 'publicBaseUrl' | 'magicLinkTtlSeconds' | 'quotas'>;
}

/**
 * Queues the mail of subscription `subscriptionId`, bought by a checkout for an existing account: at most once
 * (the outbox's dedupe key), with its recovery token in the same transaction. `owner`: the checkout was started
 * with the account's key (a plan change), else a subscription was added beside the others. True when queued now.
 */
export async function mailCheckoutOnExistingAccount(
  deps: CheckoutMailDeps,
  accountId: string,
  subscriptionId: string,
  bought: { tier: PaidTier; owner: boolean },
): Promise<boolean> {
  const now = new Date();
  const token = generateMagicToken();
  const { publicBaseUrl, magicLinkTtlSeconds, quotas } = deps.config;
  const keyLink = verifyLink(publicBaseUrl, 'recover', token);
  return deps.db.transaction().execute(async (trx) => {
    const account = await findAccountById(trx, accountId);
    if (!account) return false;
    const mail = checkoutMail({
      kind: bought.owner ? 'changed' : 'added',
      tier: bought.tier,
      quota: quotas[bought.tier],
      tierNow: account.tier,
      accountUrl: `${publicBaseUrl}/account`,
      keyLink,
      keyLinkTtlSeconds: magicLinkTtlSeconds,
    });
    const queued = await insertOutboxMail(
      trx,
      { to: account.email, ...mail, dedupeKey: `checkout-paid:${subscriptionId}` },
      now,
    );
    if (!queued) return false;
    await insertMagicToken(
      trx,
      {
        tokenHash: hashMagicToken(token),
        purpose: 'recover',
        email: account.email,
        expiresAt: new Date(now.getTime() + magicLinkTtlSeconds * 1000),
      },
      now,
    );
    return true;
  });
}
