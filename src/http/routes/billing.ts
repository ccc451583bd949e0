// POST /v1/billing/checkout, GET /v1/billing/session/:id/key, POST /v1/billing/portal and the /pricing page.
import formbody from '@fastify/formbody';
import { checkCheckoutRate } from '../../accounts/rate-limit.ts';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { claimSessionKey, openPortal, startCheckout, type CheckoutDeps } from '../../billing/checkout.ts';
import { renderPricingPage } from '../../pages/pricing.ts';
import { renderAccountPortalPage } from '../../pages/account-portal.ts';
import { cancelFromAccountPortal, describeAccountPortal, providerPortalFor } from '../../billing/portal.ts';
import { isTier } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import { invalidJson } from '../request-errors.ts';
import { SESSION_KEY_PAGE } from '../../pages/session-key.ts';
import { accountOf, authenticateApiKey, requireApiKey } from '../auth.ts';
import { parseBearerToken } from '../../accounts/api-key.ts';
import { success, BEARER, errorAnswers } from '../openapi.ts';
import {
  CHECKOUT_FIELD_CODES,
  checkoutBodySchema,
  sessionKeyResponseSchema,
  urlResponseSchema,
} from '../schemas.ts';

const CHECKOUT_SCHEMA = {
  operationId: 'startCheckout',
  tags: ['Billing'],
  summary: 'Start a hosted checkout for a paid tier',
  description:
    "A JSON body answers {url}; an HTML form post (the pricing page) is sent on to the checkout (303). With the account's key (Authorization: Bearer, optional) the checkout is the owner's plan change: once paid it replaces the account's other subscriptions; the e-mail must be the key's account's. Without it, the subscription runs beside any other and cancels nothing.",
  body: checkoutBodySchema,
  response: {
    ...success(200, 'The hosted checkout address.', urlResponseSchema),
    ...errorAnswers([
      'invalid_tier',
      'invalid_request',
      'invalid_api_key',
      'rate_limited',
      'provider_unavailable',
      'store_unavailable',
    ]),
  },
};

const SESSION_KEY_SCHEMA = {
  operationId: 'checkoutSessionKey',
  tags: ['Billing'],
  summary: 'After payment: the key, once, on the first successful checkout of the account',
  params: z.object({ id: z.string().describe('Checkout session id.') }),
  response: {
    ...success(
      200,
      'JSON for API clients: apiKey, for an account this checkout created, once; null on every later call, and for an account that existed before the checkout (whose address is mailed a key link; the answer then carries nothing about the account). A browser (Accept: text/html) gets a page that shows the key once with a copy button.',
      sessionKeyResponseSchema,
    ),
    ...errorAnswers(['session_not_found', 'payment_incomplete', 'provider_unavailable', 'store_unavailable']),
  },
};

const PORTAL_SCHEMA = {
  operationId: 'openPortal',
  tags: ['Billing'],
  summary: 'A customer-portal session: upgrade, downgrade, cancel, card update',
  security: BEARER,
  response: {
    ...success(200, 'The portal session address.', urlResponseSchema),
    ...errorAnswers(['no_billing_account', 'provider_unavailable', 'store_unavailable'], { auth: true }),
  },
};
const PORTAL_TOKEN = z.object({ token: z.string() });
const PORTAL_PAGE = {
  hide: true,
  params: PORTAL_TOKEN,
  querystring: z.object({ cancelled: z.unknown().optional() }),
};
const PORTAL_FORM = {
  hide: true,
  params: PORTAL_TOKEN,
  body: z.preprocess(
    (b) => (b !== null && typeof b === 'object' ? b : {}),
    z.object({ subscription: z.unknown().optional() }),
  ),
};
import { prefersHtml } from '../verify-page.ts';
import { sessionNotFound } from '../../billing/errors.ts';

export function billingDeps(ctx: AppContext): CheckoutDeps {
  return { db: ctx.store.db, provider: ctx.billing, log: ctx.log, config: ctx.config, mailer: ctx.mailer };
}

/**
 * The account whose key a checkout was started with: none without a Bearer header (any other Authorization
 * header is not a key either); a Bearer key that authenticates no account is 401 invalid_api_key, as everywhere.
 */
async function checkoutOwner(ctx: AppContext, header: string | undefined) {
  if (parseBearerToken(header) === undefined) return undefined;
  return authenticateApiKey(ctx, header);
}

const MAX_SESSION_ID_LENGTH = 255;

export async function billingRoutes(scope: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const app = scope.withTypeProvider<ZodTypeProvider>();
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
  app.post(
    '/v1/billing/checkout',
    { config: { fieldCodes: CHECKOUT_FIELD_CODES }, schema: CHECKOUT_SCHEMA },
    async (request, reply) => {
      const { tier, email } = request.body;
      const owner = await checkoutOwner(ctx, request.headers.authorization);
      // Counted once the body is valid: what the limit protects is provider sessions started with its e-mail.
      await checkCheckoutRate(ctx.store.db, request.ip, rule);
      const { url } = await startCheckout(deps, tier, email, owner);
      // A browser form (the pricing page) is sent on to the checkout; API clients get the URL as JSON.
      if (request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
        return reply.redirect(url, 303);
      }
      return { url };
    },
  );

  app.get('/v1/billing/session/:id/key', { schema: SESSION_KEY_SCHEMA }, async (request, reply) => {
    reply
      .header('Cache-Control', 'no-store')
      .header('Vary', 'Accept')
      .header('Referrer-Policy', 'no-referrer');
    // A browser (the provider's redirect) gets the page, whose script asks for the JSON: API clients keep the JSON.
    if (prefersHtml(request.headers.accept))
      return reply.type('text/html; charset=utf-8').send(SESSION_KEY_PAGE);
    const { id } = request.params;
    if (id.length > MAX_SESSION_ID_LENGTH) throw sessionNotFound();
    return claimSessionKey(deps, id);
  });

  app.post('/v1/billing/portal', { onRequest: requireApiKey(ctx), schema: PORTAL_SCHEMA }, async (request) =>
    openPortal(deps, accountOf(request).accountId),
  );

  // The service's own portal (billing/portal.ts): with Stripe, for an account a checkout without the key left on
  // several customers (Stripe's portal shows one).
  app.get('/billing/portal/:token', { schema: PORTAL_PAGE }, async (request, reply) => {
    const { token } = request.params;
    const view = await describeAccountPortal(deps, token);
    const cancelled = isTier(request.query.cancelled) ? request.query.cancelled : undefined;
    return reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'no-referrer')
      .send(renderAccountPortalPage(token, view, ctx.config.quotas, cancelled));
  });

  app.post('/billing/portal/:token/cancel', { schema: PORTAL_FORM }, async (request, reply) => {
    const { token } = request.params;
    const tier = await cancelFromAccountPortal(deps, token, request.body.subscription);
    // The page then says which plan was cancelled and which remains (Post/Redirect/Get).
    const query = tier ? `?cancelled=${tier}` : '';
    return reply.redirect(`/billing/portal/${encodeURIComponent(token)}${query}`, 303);
  });

  app.post('/billing/portal/:token/manage', { schema: PORTAL_FORM }, async (request, reply) => {
    const { token } = request.params;
    const portal = await providerPortalFor(deps, token, request.body.subscription);
    return reply.redirect(portal?.url ?? `/billing/portal/${encodeURIComponent(token)}`, 303);
  });

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
