// The second security review's findings (issue 22 items 4–7), each reproduced against a real listening server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/app.ts';
import { PUBLIC_BASE_URL } from '../helpers/billing.ts';
import { startStripeStub, stripeEnv } from '../helpers/stripe-stub.ts';

test('session key: only sessions this service created reach the provider; any other id is 404 session_not_found without a provider call', async (t) => {
  const stub = await startStripeStub();
  t.after(() => stub.close());
  const env = { ...stripeEnv(stub), PUBLIC_BASE_URL };
  const server = await startTestServer(t, env);
  // Another deployment on the same Stripe account: its session is real and paid, but not ours.
  const elsewhere = await startTestServer(t, env);
  const checkout = async (base: string, email: string) => {
    const res = await fetch(`${base}/v1/billing/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'starter', email }),
    });
    assert.equal(res.status, 200);
    const sessionId = ((await res.json()) as { url: string }).url.split('/').pop() as string;
    stub.completeSession(sessionId);
    return sessionId;
  };
  const foreign = await checkout(elsewhere.url, 'foreign@example.com');
  const sessionCalls = () => stub.requests.filter((r) => r.startsWith('GET /v1/checkout/sessions/')).length;
  const before = sessionCalls();
  const ids = [foreign, 'cs_test_guessed', ...Array.from({ length: 30 }, (_, i) => `cs_live_${i}`)];
  for (const id of ids) {
    const res = await fetch(`${server.url}/v1/billing/session/${id}/key`);
    assert.equal(res.status, 404, id);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'session_not_found');
  }
  assert.equal(sessionCalls(), before, 'no provider call for a session this service did not create');

  const ours = await checkout(server.url, 'buyer@example.com');
  const res = await fetch(`${server.url}/v1/billing/session/${ours}/key`);
  assert.equal(res.status, 200);
  assert.match(((await res.json()) as { apiKey: string }).apiKey, /^imgp_/);
  assert.equal(sessionCalls(), before + 1, 'our own session is read from the provider');
});
