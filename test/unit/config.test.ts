import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { looksLikeApiKey } from '../../src/accounts/api-key.ts';

test('config: defaults are those docs/configuration.md states', () => {
  const c = loadConfig({});
  assert.equal(c.port, 3000);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.publicBaseUrl, 'http://127.0.0.1:3000');
  assert.equal(c.databaseUrl, `sqlite:${resolve('./data/imgpipe.db')}`);
  assert.equal(c.maxUploadBytes, 10_485_760);
  assert.equal(c.maxFetchBytes, 10_485_760);
  assert.equal(c.maxInputPixels, 40_000_000);
  assert.equal(c.maxResizeDimension, 10_000);
  assert.equal(c.processTimeoutMs, 15_000);
  assert.equal(c.fetchTimeoutMs, 10_000);
  assert.equal(c.maxRedirects, 3);
  assert.equal(c.maxConcurrentJobs, 2);
  assert.equal(c.maxConcurrentFetches, 4);
  assert.deepEqual(c.quotas, { free: 1000, starter: 5000, growth: 25000, scale: 100000 });
  assert.equal(c.magicLinkTtlSeconds, 1800);
  assert.equal(c.signupRateLimit, 5);
  assert.equal(c.signupRateWindowSeconds, 3600);
  assert.equal(c.trustProxy, false);
  assert.deepEqual(c.fetchAllowCidrs, []);
  assert.equal(c.mailFrom, 'imgpipe <no-reply@localhost>');
  assert.equal(c.stripe, undefined);
  assert.equal(c.logLevel, 'info');
  assert.equal(c.requestTimeoutMs, 120_000);
  assert.equal(c.instanceDeadAfterMs, 60_000);
  assert.equal(c.maxAnimationFrames, 300);
  assert.equal(c.infoRateLimit, 120);
  assert.deepEqual(c.delivery, {
    cacheBytes: 1_073_741_824,
    maxAgeSeconds: 31_536_000,
    secretGraceSeconds: 86_400,
  });
});

const invalid: [string, string][] = [
  ['PORT', 'eighty'],
  ['MAX_UPLOAD_BYTES', '-1'],
  ['MAX_INPUT_PIXELS', '0'],
  ['MAX_CONCURRENT_JOBS', '1.5'],
  ['AVIF_EFFORT', '10'],
  ['ISOLATE_JOBS', 'none'],
  ['QUOTA_FREE', 'lots'],
  ['TRUST_PROXY', 'maybe'],
  ['FETCH_ALLOW_CIDRS', '10.0.0.0'],
  ['DEV_KEY', 'imgp_short'],
  ['PUBLIC_BASE_URL', 'not a url'],
  ['DATABASE_URL', 'mysql://x'],
  ['LOG_LEVEL', 'loud'],
  ['SMTP_URL', 'http://mail'],
  ['REQUEST_TIMEOUT_MS', '0'],
  ['INSTANCE_DEAD_AFTER_MS', '500'],
  ['MAX_ANIMATION_FRAMES', '0'],
  ['INFO_RATE_LIMIT', 'many'],
  ['DELIVERY_CACHE_BYTES', '1GiB'],
  ['DELIVERY_MAX_AGE_SECONDS', '-5'],
  ['DELIVERY_SECRET_GRACE_SECONDS', 'a day'],
];

for (const [name, value] of invalid) {
  test(`config: an invalid ${name} stops start-up naming the variable`, () => {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (err: unknown) => err instanceof ConfigError && err.message.includes(name),
    );
  });
}

test('config: NODE_ENV fails closed: only unset, development and test are development; empty is production', () => {
  for (const nodeEnv of [undefined, 'development', 'test']) {
    const c = loadConfig({ NODE_ENV: nodeEnv });
    assert.equal(c.isProduction, false, String(nodeEnv));
    assert.equal(c.localBilling, true, String(nodeEnv));
    assert.equal(c.devMailPage, true, String(nodeEnv));
  }
  for (const nodeEnv of ['', ' ', 'production', 'Production', 'dev', 'Development', 'test ', 'staging']) {
    const c = loadConfig({ NODE_ENV: nodeEnv });
    assert.equal(c.isProduction, true, JSON.stringify(nodeEnv));
    assert.equal(c.localBilling, false, `${JSON.stringify(nodeEnv)}: no free paid tiers`);
    assert.equal(c.devMailPage, false, `${JSON.stringify(nodeEnv)}: no /dev/mail`);
  }
  const named = loadConfig({ NODE_ENV: '', DEV_MAIL_PAGE: 'on', LOCAL_BILLING: 'on' });
  assert.equal(named.isProduction, true);
  assert.equal(named.devMailPage, true, 'production has /dev/mail only when named');
  assert.equal(named.localBilling, true, 'production has local billing only when named');
});

test('config: a DEV_KEY is accepted exactly when it has the shape requests authenticate with', () => {
  for (const length of [31, 32, 128, 129]) {
    const key = `imgp_${'k'.repeat(length)}`;
    const accepted = (() => {
      try {
        return loadConfig({ DEV_KEY: key }).devKey === key;
      } catch (err) {
        assert.ok(err instanceof ConfigError && err.message.includes('DEV_KEY'), String(err));
        return false;
      }
    })();
    assert.equal(accepted, looksLikeApiKey(key), `DEV_KEY of ${length} characters after imgp_`);
  }
  assert.throws(() => loadConfig({ DEV_KEY: `imgp_${'k'.repeat(129)}` }), /DEV_KEY/);
});

test('config: STRIPE_SECRET_KEY without STRIPE_WEBHOOK_SECRET is refused', () => {
  assert.throws(() => loadConfig({ STRIPE_SECRET_KEY: 'sk_test_x' }), /STRIPE_WEBHOOK_SECRET/);
});

test('config: values are parsed and trailing slashes of base URLs dropped', () => {
  const c = loadConfig({
    PUBLIC_BASE_URL: 'https://img.example.com/',
    TRUST_PROXY: 'true',
    FETCH_ALLOW_CIDRS: '127.0.0.0/8, fd00::/8',
    DATABASE_URL: 'postgres://u@db/imgpipe',
  });
  assert.equal(c.publicBaseUrl, 'https://img.example.com');
  assert.equal(c.trustProxy, 1);
  assert.deepEqual(c.fetchAllowCidrs, ['127.0.0.0/8', 'fd00::/8']);
  assert.equal(c.databaseUrl, 'postgres://u@db/imgpipe');
});

test('config: without PUBLIC_BASE_URL links name the listen address (a wildcard HOST names 127.0.0.1)', () => {
  assert.equal(loadConfig({ PORT: '4610' }).publicBaseUrl, 'http://127.0.0.1:4610');
  assert.equal(loadConfig({ HOST: '0.0.0.0' }).publicBaseUrl, 'http://127.0.0.1:3000');
  assert.equal(loadConfig({ HOST: '::' }).publicBaseUrl, 'http://127.0.0.1:3000');
  assert.equal(loadConfig({ HOST: '::1' }).publicBaseUrl, 'http://[::1]:3000');
  assert.equal(loadConfig({ HOST: 'localhost' }).publicBaseUrl, 'http://localhost:3000');
  assert.equal(
    loadConfig({ HOST: '0.0.0.0', PUBLIC_BASE_URL: 'https://img.example.com/' }).publicBaseUrl,
    'https://img.example.com',
    'an explicit PUBLIC_BASE_URL always wins',
  );
});
