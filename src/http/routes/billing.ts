// POST /v1/billing/checkout, GET /v1/billing/session/:id/key, POST /v1/billing/portal and the /pricing page.
import formbody from '@fastify/formbody';
import { checkCheckoutRate } from '../../accounts/rate-limit.ts';
import type { FastifyInstance } from 'fastify';
import { claimSessionKey, openPortal, startCheckout, type CheckoutDeps } from '../../billing/checkout.ts';
import { renderPricingPage } from '../../pages/pricing.ts';
import type { AppContext } from '../../context.ts';
import { invalidJson } from '../request-errors.ts';
import { SESSION_KEY_PAGE } from '../../pages/session-key.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { routeSchema } from '../openapi.ts';
import {
  checkoutBodySchema,
  parseCheckoutRequest,
  sessionKeyResponseSchema,
  urlResponseSchema,
} from '../schemas.ts';

const CHECKOUT_SCHEMA = routeSchema({
  operationId: 'startCheckout',
  tag: 'Billing',
  summary: 'Start a hosted checkout for a paid tier',
  description:
    'A JSON body answers {url}; an HTML form post (the pricing page) is sent on to the checkout (303).',
  body: checkoutBodySchema,
  success: { status: 200, description: 'The hosted checkout address.', schema: urlResponseSchema },
  errors: ['invalid_tier', 'invalid_request', 'rate_limited', 'provider_unavailable', 'store_unavailable'],
});

const SESSION_KEY_SCHEMA = routeSchema({
  operationId: 'checkoutSessionKey',
  tag: 'Billing',
  summary: 'After payment: the key, once, on the first successful checkout of the account',
  params: {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'string', description: 'Checkout session id.' } },
  },
  success: {
    status: 200,
    description:
      'JSON for API clients: apiKey, or null (the account already has a key, or this key was already shown). A browser (Accept: text/html) gets a page that shows the key once with a copy button.',
    schema: sessionKeyResponseSchema,
  },
  errors: ['session_not_found', 'payment_incomplete', 'provider_unavailable', 'store_unavailable'],
});

const PORTAL_SCHEMA = routeSchema({
  operationId: 'openPortal',
  tag: 'Billing',
  summary: 'A customer-portal session: upgrade, downgrade, cancel, card update',
  auth: true,
  success: { status: 200, description: 'The portal session address.', schema: urlResponseSchema },
  errors: ['no_billing_account', 'provider_unavailable', 'store_unavailable'],
});
import { htmlPreferred } from '../verify-page.ts';
import { sessionNotFound } from '../../billing/errors.ts';

export function billingDeps(ctx: AppContext): CheckoutDeps {
  return { db: ctx.store.db, provider: ctx.billing, log: ctx.log, config: ctx.config };
}

const MAX_SESSION_ID_LENGTH = 255;

export async function billingRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const deps = billingDeps(ctx);
  // The pricing page posts plain HTML forms here.
  await app.register(formbody);
  // An empty JSON body (e.g. POST /v1/billing/portal with a Content-Type) reads as no body, not an error.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(invalidJson());
    }
  });

  const rule = { limit: ctx.config.signupRateLimit, windowSeconds: ctx.config.signupRateWindowSeconds };
  app.post('/v1/billing/checkout', { schema: CHECKOUT_SCHEMA }, async (request, reply) => {
    const { tier, email } = parseCheckoutRequest(request.body);
    // Counted once the body is valid: what the limit protects is provider customers created with its e-mail.
    await checkCheckoutRate(ctx.store.db, request.ip, rule);
    const { url } = await startCheckout(deps, tier, email);
    // A browser form (the pricing page) is sent on to the checkout; API clients get the URL as JSON.
    if (request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      return reply.redirect(url, 303);
    }
    return { url };
  });

  app.get<{ Params: { id: string } }>(
    '/v1/billing/session/:id/key',
    { schema: SESSION_KEY_SCHEMA },
    async (request, reply) => {
      reply
        .header('Cache-Control', 'no-store')
        .header('Vary', 'Accept')
        .header('Referrer-Policy', 'no-referrer');
      // A browser (the provider's redirect) gets the page, whose script asks for the JSON: API clients keep the JSON.
      if (htmlPreferred(request.accepts()))
        return reply.type('text/html; charset=utf-8').send(SESSION_KEY_PAGE);
      const { id } = request.params;
      if (id.length > MAX_SESSION_ID_LENGTH) throw sessionNotFound();
      return claimSessionKey(deps, id);
    },
  );

  app.post('/v1/billing/portal', { onRequest: requireApiKey(ctx), schema: PORTAL_SCHEMA }, async (request) =>
    openPortal(deps, accountOf(request).accountId),
  );

  app.get('/pricing', async (_request, reply) => {
    const prices = await ctx.billing.displayPrices();
    const page = renderPricingPage({
      quotas: ctx.config.quotas,
      paidTiers: ctx.billing.paidTiers,
      prices,
      devMail: ctx.config.devMailPage,
    });
    return reply.type('text/html; charset=utf-8').send(page);
  });
}
