// Every page works under the Content-Security-Policy every answer carries: no CSP violation, no page error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { buildMailTestApp, requestLink } from '../helpers/accounts.ts';
import { CHROMIUM, newPage } from '../helpers/browser.ts';

const SHOTS = new URL('../../test-output/', import.meta.url);

function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || /Content Security Policy/i.test(msg.text())) problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  return problems;
}

test('security headers: /docs, a guide, the playground, /pricing, the verify page and the local checkout work under the CSP', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`Chromium not found at ${CHROMIUM} (install the Debian package "chromium" or set CHROMIUM_PATH)`);
    return;
  }
  mkdirSync(SHOTS, { recursive: true });
  const env = await buildMailTestApp(t);
  const base = await env.app.listen({ port: 0, host: '127.0.0.1' });
  const { path: verifyPath } = await requestLink(env, 'csp@example.org');
  const checkout = await fetch(`${base}/v1/billing/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'starter', email: 'csp@example.org' }),
  });
  const checkoutPath = new URL(((await checkout.json()) as { url: string }).url).pathname;

  const pages: Array<{ name: string; path: string; ready: string }> = [
    { name: 'docs', path: '/docs', ready: '.swagger-ui .opblock' },
    { name: 'guide', path: '/docs/delivery', ready: 'article.guide h1' },
    { name: 'playground', path: '/', ready: 'form' },
    { name: 'pricing', path: '/pricing', ready: 'h1' },
    { name: 'verify', path: verifyPath, ready: '#go' },
    { name: 'local-checkout', path: checkoutPath, ready: 'button' },
  ];
  for (const { name, path, ready } of pages) {
    const page = await newPage(t);
    const problems = watchProblems(page);
    const res = await page.goto(base + path);
    assert.match(res?.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/, name);
    await page.locator(ready).first().waitFor({ state: 'visible', timeout: 15_000 });
    await page.screenshot({ path: new URL(`csp-${name}.png`, SHOTS).pathname, fullPage: true });
    assert.deepEqual(problems, [], `${name}: console errors or CSP violations`);
    await page.close();
  }

  // The verify page's script runs under its own hash-based policy: the button still shows the key.
  const verify = await newPage(t);
  const problems = watchProblems(verify);
  await verify.goto(base + verifyPath);
  await verify.click('#go');
  await verify.locator('#key').waitFor({ state: 'visible' });
  assert.deepEqual(problems, []);
});
