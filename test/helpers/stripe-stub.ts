// A Stripe-compatible HTTP stub for the real SDK: customers (create, list, search), checkout sessions (create,
// retrieve), billing portal sessions, subscriptions (retrieve, cancel); plus controls the tests use to play
// Stripe's part.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

type Obj = Record<string, unknown>;

/** Decodes Stripe's form encoding (`a[b][0][c]=v`) into nested objects; numeric keys become arrays. */
export function decodeStripeForm(body: string): Obj {
  const root: Obj = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.split(/\[|\]\[|\]/).filter((part) => part !== '');
    let node: Obj = root;
    path.forEach((part, i) => {
      if (i === path.length - 1) node[part] = value;
      else node = (node[part] ??= {}) as Obj;
    });
  }
  const arrays = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Obj).map(([k, v]) => [k, arrays(v)] as const);
    const numeric = entries.length > 0 && entries.every(([k]) => /^\d+$/.test(k));
    return numeric ? entries.map(([, v]) => v) : Object.fromEntries(entries);
  };
  return arrays(root) as Obj;
}

const newId = (prefix: string) => `${prefix}_test_${randomBytes(8).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

export interface StubSubscription extends Obj {
  id: string;
  customer: string;
  status: string;
  items: { object: 'list'; data: { id: string; price: { id: string } }[] };
  metadata: Record<string, string>;
}

export interface StripeStub {
  url: string;
  customers: Obj[];
  sessions: Map<string, Obj>;
  subscriptions: Map<string, StubSubscription>;
  /** Customer-portal sessions made, in order. */
  portalSessions: { customer: string; return_url: string; url: string }[];
  /** Requests seen, as `METHOD /path`. */
  requests: string[];
  /** When set, every API call answers 500 api_error. */
  failing: boolean;
  /** When set, cancelling a subscription answers 500 api_error (every other call works). */
  failingCancels: boolean;
  /** Plays the customer paying at the hosted page: an active subscription on the session's price. */
  completeSession(sessionId: string): { session: Obj; subscription: StubSubscription };
  /** A subscription made outside this service (Stripe's dashboard), active on `price`, started at `started`. */
  createSubscription(customer: string, price: string, started?: number): StubSubscription;
  /** Changes a subscription (price and/or status) as the portal would. */
  updateSubscription(id: string, change: { price?: string; status?: string }): StubSubscription;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
  res.end(JSON.stringify(body));
}

function missing(res: ServerResponse, what: string, id: string) {
  send(res, 404, {
    error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}: '${id}'` },
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

export async function startStripeStub(): Promise<StripeStub> {
  const idempotent = new Map<string, Obj>();
  const newSubscription = (customer: string, price: string, started: number): StubSubscription => {
    const subscription: StubSubscription = {
      id: newId('sub'),
      object: 'subscription',
      customer,
      status: 'active',
      created: started,
      start_date: started,
      metadata: {},
      items: { object: 'list', data: [{ id: newId('si'), price: { id: price } }] },
    };
    stub.subscriptions.set(subscription.id, subscription);
    return subscription;
  };
  const stub: StripeStub = {
    url: '',
    customers: [],
    sessions: new Map(),
    subscriptions: new Map(),
    portalSessions: [],
    requests: [],
    failing: false,
    failingCancels: false,
    completeSession(sessionId) {
      const session = stub.sessions.get(sessionId);
      if (!session) throw new Error(`stub: no session ${sessionId}`);
      // Paid without a customer (customer_email): Stripe makes one for the session, as in subscription mode.
      if (!session.customer) {
        const customer = {
          id: newId('cus'),
          object: 'customer',
          email: session.customer_email,
          metadata: {},
        };
        stub.customers.push(customer);
        session.customer = customer.id;
      }
      const lineItems = session.line_items as { price: string }[];
      const subData = (session.subscription_data ?? {}) as { metadata?: Record<string, string> };
      const subscription = newSubscription(session.customer as string, lineItems[0]!.price, now());
      subscription.metadata = subData.metadata ?? {};
      Object.assign(session, { status: 'complete', payment_status: 'paid', subscription: subscription.id });
      return { session, subscription };
    },
    createSubscription(customer, price, started = now()) {
      return newSubscription(customer, price, started);
    },
    updateSubscription(id, change) {
      const sub = stub.subscriptions.get(id);
      if (!sub) throw new Error(`stub: no subscription ${id}`);
      if (change.price) sub.items.data[0]!.price = { id: change.price };
      if (change.status) sub.status = change.status;
      return sub;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    const body = decodeStripeForm(await readBody(req));
    stub.requests.push(`${req.method} ${url.pathname}`);
    if (stub.failing) return send(res, 500, { error: { type: 'api_error', message: 'stub is failing' } });
    const key = req.headers['idempotency-key'];
    const route = `${req.method} ${url.pathname}`;
    let match: RegExpExecArray | null;

    if (route === 'POST /v1/customers') {
      // Like Stripe, one idempotency key returns the first answer again (the SDK sends one on every POST).
      const cached = typeof key === 'string' ? idempotent.get(key) : undefined;
      if (cached) return send(res, 200, cached);
      const customer = {
        id: newId('cus'),
        object: 'customer',
        email: body.email ?? null,
        metadata: body.metadata ?? {},
      };
      stub.customers.push(customer);
      if (typeof key === 'string') idempotent.set(key, customer);
      return send(res, 200, customer);
    }
    if (route === 'GET /v1/customers') {
      const email = url.searchParams.get('email');
      const data = stub.customers.filter((c) => email === null || c.email === email);
      return send(res, 200, { object: 'list', url: '/v1/customers', has_more: false, data });
    }
    if (route === 'GET /v1/customers/search') {
      const wanted = /email:['"]([^'"]*)['"]/.exec(url.searchParams.get('query') ?? '')?.[1];
      const data = stub.customers.filter((c) => c.email === wanted);
      return send(res, 200, { object: 'search_result', url: '/v1/customers/search', has_more: false, data });
    }
    if (route === 'POST /v1/checkout/sessions') {
      // Like Stripe: an existing customer, or none (customer_email; a customer is made when it is paid).
      if (body.customer !== undefined && !stub.customers.some((c) => c.id === body.customer))
        return missing(res, 'customer', String(body.customer));
      const id = newId('cs');
      const session = {
        ...body,
        id,
        object: 'checkout.session',
        status: 'open',
        payment_status: 'unpaid',
        customer: body.customer ?? null,
        customer_email: body.customer_email ?? null,
        subscription: null,
        created: now(),
        url: `https://checkout.stripe.test/c/pay/${id}`,
      };
      stub.sessions.set(id, session);
      return send(res, 200, session);
    }
    if (req.method === 'GET' && (match = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname))) {
      const session = stub.sessions.get(decodeURIComponent(match[1]!));
      return session ? send(res, 200, session) : missing(res, 'checkout.session', match[1]!);
    }
    if (route === 'POST /v1/billing_portal/sessions') {
      if (!stub.customers.some((c) => c.id === body.customer))
        return missing(res, 'customer', String(body.customer));
      const id = newId('bps');
      const session = {
        customer: String(body.customer),
        return_url: String(body.return_url),
        url: `https://billing.stripe.test/p/session/${id}`,
      };
      stub.portalSessions.push(session);
      return send(res, 200, { id, object: 'billing_portal.session', ...session });
    }
    if (req.method === 'GET' && (match = /^\/v1\/prices\/([^/]+)$/.exec(url.pathname))) {
      const id = decodeURIComponent(match[1]!);
      const amount = STUB_PRICE_AMOUNTS[id];
      if (amount === undefined) return missing(res, 'price', id);
      return send(res, 200, {
        id,
        object: 'price',
        currency: 'eur',
        unit_amount: amount,
        recurring: { interval: 'month', interval_count: 1 },
      });
    }
    if (req.method === 'GET' && (match = /^\/v1\/subscriptions\/([^/]+)$/.exec(url.pathname))) {
      const sub = stub.subscriptions.get(decodeURIComponent(match[1]!));
      return sub ? send(res, 200, sub) : missing(res, 'subscription', match[1]!);
    }
    if (req.method === 'DELETE' && (match = /^\/v1\/subscriptions\/([^/]+)$/.exec(url.pathname))) {
      // Like Stripe: cancelling ends the subscription at once; one already canceled is "no such subscription".
      if (stub.failingCancels) return send(res, 500, { error: { type: 'api_error', message: 'stub fails' } });
      const sub = stub.subscriptions.get(decodeURIComponent(match[1]!));
      if (!sub || sub.status === 'canceled') return missing(res, 'subscription', match[1]!);
      Object.assign(sub, { status: 'canceled', canceled_at: now(), ended_at: now() });
      return send(res, 200, sub);
    }
    return send(res, 404, { error: { type: 'invalid_request_error', message: `stub: no route ${route}` } });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) =>
      send(res, 500, { error: { type: 'api_error', message: String(err) } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return stub;
}

export const STUB_WEBHOOK_SECRET = 'whsec_test_imgpipe';
export const STUB_PRICES = { starter: 'price_starter_t', growth: 'price_growth_t', scale: 'price_scale_t' };
/** Amounts (euro cents a month) the stub's prices carry; the pricing page shows them as "€12.00 / month". */
const STUB_PRICE_AMOUNTS: Record<string, number> = {
  [STUB_PRICES.starter]: 1200,
  [STUB_PRICES.growth]: 3900,
  [STUB_PRICES.scale]: 11900,
};

/** Environment that runs imgpipe on Stripe, pointed at the stub. */
export function stripeEnv(stub: StripeStub): Record<string, string> {
  return {
    STRIPE_SECRET_KEY: 'sk_test_imgpipe',
    STRIPE_WEBHOOK_SECRET: STUB_WEBHOOK_SECRET,
    STRIPE_API_BASE: stub.url,
    STRIPE_PRICE_STARTER: STUB_PRICES.starter,
    STRIPE_PRICE_GROWTH: STUB_PRICES.growth,
    STRIPE_PRICE_SCALE: STUB_PRICES.scale,
  };
}

export interface SignedWebhook {
  payload: string;
  headers: Record<string, string>;
}

/** A Stripe event body and its Stripe-Signature header, signed by the SDK's test helper. */
export function signedEvent(
  type: string,
  object: unknown,
  options: { id?: string; created?: number; timestamp?: number; secret?: string } = {},
): SignedWebhook {
  const payload = JSON.stringify({
    id: options.id ?? newId('evt'),
    object: 'event',
    type,
    created: options.created ?? now(),
    data: { object },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? STUB_WEBHOOK_SECRET,
    timestamp: options.timestamp,
  });
  return { payload, headers: { 'content-type': 'application/json', 'stripe-signature': signature } };
}
