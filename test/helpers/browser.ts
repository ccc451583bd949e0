// One headless Chromium per test file (Debian's /usr/bin/chromium through playwright-core), launched on first use
// and closed after the file's last test: a launch costs seconds of CPU. Each test gets contexts of its own (cookies,
// storage, permissions, viewport), closed when it ends, so tests share nothing but the browser process.
import { after, type TestContext } from 'node:test';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
} from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

let launched: Promise<Browser> | undefined;

// Registered while the test file loads, so it is the file's hook, not the first test's.
after(async () => {
  if (launched) await (await launched).close();
});

/** A fresh context of the file's browser, closed after the test `t`. */
export async function newContext(
  t: TestContext,
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  launched ??= chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await (await launched).newContext(options);
  t.after(() => context.close());
  return context;
}

/** A page in a fresh context (as Browser.newPage), closed after the test `t`. */
export async function newPage(t: TestContext, options: BrowserContextOptions = {}): Promise<Page> {
  return (await newContext(t, options)).newPage();
}
