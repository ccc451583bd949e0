// The local payment provider's hosted pages (contract §4), registered only when STRIPE_SECRET_KEY is unset.
// Pay and every portal change deliver their signed events to the same handler as POST /v1/billing/webhook.
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { receiveProviderEvent } from '../../billing/events.ts';
import { LocalProvider, type SignedEvent } from '../../billing/local-provider.ts';
import { renderLocalCheckoutPage, renderLocalPortalPage } from '../../billing/pages.ts';
import { PAID_TIERS, isTier, type Tier } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import { billingDeps } from './billing.ts';
import { invalidTier, portalSessionNotFound, sessionNotFound } from '../../billing/errors.ts';

type IdParams = { Params: { id: string } };
type TokenParams = { Params: { token: string } };
type PortalParams = TokenParams & { Querystring: { changed?: string } };

const asTier = (value: unknown): Tier | undefined => (isTier(value) ? value : undefined);

export async function devBillingRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const provider = ctx.billing;
  if (!(provider instanceof LocalProvider)) throw new Error('dev billing pages need the local provider');
  const deps = billingDeps(ctx);
  await app.register(formbody);
  ctx.log.info('payment provider: local (STRIPE_SECRET_KEY unset); buy a tier at /pricing');

  const deliver = async (events: SignedEvent[]) => {
    for (const event of events) await receiveProviderEvent(deps, event.payload, event.signature);
  };
  provider.deliverEventsTo((event) => deliver([event]));

  app.get<IdParams>('/dev/billing/checkout/:id', async (request, reply) => {
    const view = await provider.describeCheckout(request.params.id);
    if (!view) throw sessionNotFound(request.params.id);
    return reply.type('text/html; charset=utf-8').send(renderLocalCheckoutPage(view));
  });

  app.post<IdParams>('/dev/billing/checkout/:id/pay', async (request, reply) => {
    const { id } = request.params;
    await deliver(await provider.payCheckout(id));
    return reply.redirect(`/v1/billing/session/${encodeURIComponent(id)}/key`, 303);
  });

  app.get<PortalParams>('/dev/billing/portal/:token', async (request, reply) => {
    const view = await provider.describePortal(request.params.token);
    if (!view) throw portalSessionNotFound();
    const changed = asTier(request.query.changed);
    return reply
      .type('text/html; charset=utf-8')
      .send(renderLocalPortalPage(request.params.token, view, ctx.config.quotas, changed));
  });

  app.post<TokenParams>('/dev/billing/portal/:token/tier', async (request, reply) => {
    const tier = asTier((request.body as { tier?: unknown } | undefined)?.tier);
    if (!tier) throw invalidTier([...PAID_TIERS, 'free']);
    const { token } = request.params;
    await deliver(await provider.changeTier(token, tier));
    // The page then says what changed (Post/Redirect/Get: a reload repeats nothing).
    return reply.redirect(`/dev/billing/portal/${encodeURIComponent(token)}?changed=${tier}`, 303);
  });
}
