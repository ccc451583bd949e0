// The local payment provider's hosted pages, registered only when STRIPE_SECRET_KEY is unset.
// Pay and every portal change deliver their signed events to the same handler as POST /v1/billing/webhook.
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { receiveProviderEvent } from '../../billing/events.ts';
import type { HostedBillingPages, SignedEvent } from '../../billing/provider.ts';
import { PAID_TIERS, isTier, type Tier } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import { billingDeps } from './billing.ts';
import { invalidTier, portalSessionNotFound, sessionNotFound } from '../../billing/errors.ts';
import { renderLocalCheckoutPage, renderLocalPortalPage } from '../../pages/dev-billing.ts';
import { findAccountByCustomerId } from '../../store/billing.ts';
import { findAccountByEmail } from '../../store/accounts.ts';
import type { Db } from '../../store/schema.ts';
import type { LocalPortalView } from '../../billing/provider.ts';

/**
 * The account the portal's customer pays for (its linked customer, else its e-mail's): the page says which
 * plan the account keeps, its operator's tier counted.
 */
async function portalAccount(db: Db, view: LocalPortalView) {
  const account =
    (await findAccountByCustomerId(db, view.customerId)) ?? (await findAccountByEmail(db, view.email));
  return { tier: account?.tier ?? view.tier, operatorTier: account?.operator_tier ?? 'free' };
}

// Pages of the local provider only, kept out of the document; asTier decides what a tier field holds.
const ID = { hide: true, params: z.object({ id: z.string() }) };
const TOKEN = { hide: true, params: z.object({ token: z.string() }) };
const PORTAL = {
  ...TOKEN,
  querystring: z.object({ changed: z.unknown().optional(), cancelled: z.unknown().optional() }),
};
const CANCEL_FORM = {
  ...TOKEN,
  body: z.preprocess(
    (b) => (b !== null && typeof b === 'object' ? b : {}),
    z.object({ subscription: z.unknown().optional() }),
  ),
};
const TIER_FORM = {
  ...TOKEN,
  body: z.preprocess(
    (b) => (b !== null && typeof b === 'object' ? b : {}),
    z.object({ tier: z.unknown().optional() }),
  ),
};

const asTier = (value: unknown): Tier | undefined => (isTier(value) ? value : undefined);

export async function devBillingRoutes(
  scope: FastifyInstance,
  { ctx, provider }: { ctx: AppContext; provider: HostedBillingPages },
): Promise<void> {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const deps = billingDeps(ctx);
  await app.register(formbody);
  ctx.log.info('payment provider: local (STRIPE_SECRET_KEY unset); buy a tier at /pricing');

  const deliver = async (events: SignedEvent[]) => {
    for (const event of events) await receiveProviderEvent(deps, event.payload, event.signature);
  };
  provider.deliverEventsTo((event) => deliver([event]));

  app.get('/dev/billing/checkout/:id', { schema: ID }, async (request, reply) => {
    const view = await provider.describeCheckout(request.params.id);
    if (!view) throw sessionNotFound(request.params.id);
    return reply.type('text/html; charset=utf-8').send(renderLocalCheckoutPage(view));
  });

  app.post('/dev/billing/checkout/:id/pay', { schema: ID }, async (request, reply) => {
    const { id } = request.params;
    await deliver(await provider.payCheckout(id));
    return reply.redirect(`/v1/billing/session/${encodeURIComponent(id)}/key`, 303);
  });

  app.get('/dev/billing/portal/:token', { schema: PORTAL }, async (request, reply) => {
    const view = await provider.describePortal(request.params.token);
    if (!view) throw portalSessionNotFound();
    const account = await portalAccount(ctx.store.db, view);
    const after = {
      changed: asTier(request.query.changed),
      cancelled: asTier(request.query.cancelled),
    };
    return reply
      .type('text/html; charset=utf-8')
      .send(renderLocalPortalPage(request.params.token, view, account, ctx.config.quotas, after));
  });

  app.post('/dev/billing/portal/:token/cancel', { schema: CANCEL_FORM }, async (request, reply) => {
    const { token } = request.params;
    const { subscription } = request.body;
    const view = await provider.describePortal(token);
    if (!view) throw portalSessionNotFound();
    const cancelled = view.subscriptions.find((sub) => sub.id === subscription);
    if (cancelled) await deliver(await provider.cancelFromPortal(token, cancelled.id));
    // The page then says which plan was cancelled and which remains (Post/Redirect/Get).
    const query = cancelled ? `?cancelled=${cancelled.tier}` : '';
    return reply.redirect(`/dev/billing/portal/${encodeURIComponent(token)}${query}`, 303);
  });

  app.post('/dev/billing/portal/:token/tier', { schema: TIER_FORM }, async (request, reply) => {
    const tier = asTier(request.body.tier);
    if (!tier) throw invalidTier([...PAID_TIERS, 'free']);
    const { token } = request.params;
    await deliver(await provider.changeTier(token, tier));
    // The page then says what changed (Post/Redirect/Get: a reload repeats nothing).
    return reply.redirect(`/dev/billing/portal/${encodeURIComponent(token)}?changed=${tier}`, 303);
  });
}
