// The table of public endpoints that openapi.ts turns into paths.
import type { ErrorCode } from '../errors.ts';
import type { Endpoint } from './openapi-endpoint.ts';
import { IMAGE_ENDPOINT } from './openapi-image.ts';

type JsonObject = Record<string, unknown>;

const jsonBody = (ref: string): JsonObject => ({
  required: true,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } },
});
const tokenParameter: JsonObject = {
  name: 'token',
  in: 'query',
  required: true,
  description: 'The single-use token from the e-mailed link.',
  schema: { type: 'string' },
};
const TOKEN_ERRORS: ErrorCode[] = ['invalid_token', 'token_used', 'token_expired', 'store_unavailable'];

export const ENDPOINTS: Endpoint[] = [
  IMAGE_ENDPOINT,
  {
    method: 'post',
    path: '/v1/signup',
    operationId: 'signup',
    tag: 'Accounts and keys',
    summary: 'Free-tier signup: e-mails a single-use magic link',
    description:
      'Always 202 with the same body, whether or not the account exists. Rate-limited per client IP.',
    requestBody: jsonBody('SignupBody'),
    success: {
      status: 202,
      description: 'The link is on its way (if the address is valid).',
      schema: 'Message',
    },
    errors: ['invalid_request', 'rate_limited', 'store_unavailable'],
    errorDescriptions: { invalid_request: 'The body is not {"email": <valid address>}.' },
  },
  {
    method: 'get',
    path: '/v1/signup/verify',
    operationId: 'verifySignup',
    tag: 'Accounts and keys',
    summary: 'Open the magic link: returns the free-tier key once',
    parameters: [tokenParameter],
    success: {
      status: 200,
      description: 'apiKey, or null when the account already has one.',
      schema: 'ApiKey',
    },
    errors: TOKEN_ERRORS,
  },
  {
    method: 'post',
    path: '/v1/keys/rotate',
    operationId: 'rotateKey',
    tag: 'Accounts and keys',
    summary: 'Revoke the calling key and return a new one, once',
    auth: true,
    success: {
      status: 200,
      description: 'The new key; the old one stops working at once.',
      schema: 'ApiKey',
    },
    errors: ['store_unavailable'],
  },
  {
    method: 'post',
    path: '/v1/keys/recover',
    operationId: 'recoverKey',
    tag: 'Accounts and keys',
    summary: 'Lost key: e-mails a single-use recovery link',
    description:
      'Always 202 with the same body, whether or not the account exists. Rate-limited per client IP.',
    requestBody: jsonBody('RecoverBody'),
    success: {
      status: 202,
      description: 'The link is on its way (if the account exists).',
      schema: 'Message',
    },
    errors: ['invalid_request', 'rate_limited', 'store_unavailable'],
  },
  {
    method: 'get',
    path: '/v1/keys/recover/verify',
    operationId: 'verifyRecovery',
    tag: 'Accounts and keys',
    summary: "Open the recovery link: revokes the account's key and returns a new one, once",
    parameters: [tokenParameter],
    success: { status: 200, description: 'The new key.', schema: 'ApiKey' },
    errors: TOKEN_ERRORS,
  },
  {
    method: 'get',
    path: '/v1/account',
    operationId: 'getAccount',
    tag: 'Accounts and keys',
    summary: "The calling key's account: e-mail, tier and this month's quota",
    auth: true,
    success: { status: 200, description: 'The account.', schema: 'Account' },
    errors: ['store_unavailable'],
  },
  {
    method: 'post',
    path: '/v1/billing/checkout',
    operationId: 'startCheckout',
    tag: 'Billing',
    summary: 'Start a hosted checkout for a paid tier',
    requestBody: jsonBody('CheckoutBody'),
    success: { status: 200, description: 'The hosted checkout address.', schema: 'Url' },
    errors: ['invalid_tier', 'invalid_request', 'provider_unavailable', 'store_unavailable'],
  },
  {
    method: 'get',
    path: '/v1/billing/session/{id}/key',
    operationId: 'checkoutSessionKey',
    tag: 'Billing',
    summary: 'After payment: the key, once, on the first successful checkout of the account',
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'Checkout session id.',
        schema: { type: 'string' },
      },
    ],
    success: {
      status: 200,
      description:
        'JSON for API clients: apiKey, or null (the account already has a key, or this key was already shown). A browser (Accept: text/html) gets a page that shows the key once with a copy button.',
      schema: 'SessionKey',
    },
    errors: ['session_not_found', 'payment_incomplete', 'provider_unavailable', 'store_unavailable'],
  },
  {
    method: 'post',
    path: '/v1/billing/portal',
    operationId: 'openPortal',
    tag: 'Billing',
    summary: 'A customer-portal session: upgrade, downgrade, cancel, card update',
    auth: true,
    success: { status: 200, description: 'The portal session address.', schema: 'Url' },
    errors: ['no_billing_account', 'provider_unavailable', 'store_unavailable'],
  },
  {
    method: 'post',
    path: '/v1/billing/webhook',
    operationId: 'billingWebhook',
    tag: 'Billing',
    summary: 'Payment-provider events (called by the provider, signed with Stripe-Signature)',
    parameters: [{ name: 'Stripe-Signature', in: 'header', required: true, schema: { type: 'string' } }],
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
    success: { status: 200, description: 'Recorded (unknown event types too).', schema: 'WebhookReceived' },
    errors: ['invalid_signature', 'store_unavailable'],
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    tag: 'Operations',
    summary: 'Liveness: 200 while the process serves',
    success: { status: 200, description: 'Serving.', schema: 'Health' },
    errors: [],
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'ready',
    tag: 'Operations',
    summary: 'Readiness: 200 when the store answers, else 503',
    success: { status: 200, description: 'Ready.', schema: 'Health' },
    errors: ['store_unavailable'],
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics of this instance',
    success: {
      status: 200,
      description: 'Prometheus text exposition format.',
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
    errors: [],
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    tag: 'Operations',
    summary: 'This document',
    success: {
      status: 200,
      description: 'OpenAPI 3.1.',
      content: { 'application/json': { schema: { type: 'object' } } },
    },
    errors: [],
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'docs',
    tag: 'Operations',
    summary: 'Human-readable API reference rendered from this document',
    success: {
      status: 200,
      description: 'HTML page.',
      content: { 'text/html': { schema: { type: 'string' } } },
    },
    errors: [],
  },
  {
    method: 'get',
    path: '/',
    operationId: 'playground',
    tag: 'Operations',
    summary: 'Playground: try POST /v1/image in the browser',
    success: {
      status: 200,
      description: 'HTML page.',
      content: { 'text/html': { schema: { type: 'string' } } },
    },
    errors: [],
  },
];
