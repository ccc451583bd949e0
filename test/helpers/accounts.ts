// Signup/recovery helpers shared by the account tests: request a link, read it from the SMTP sink, verify it.
import type { FastifyInstance } from 'fastify';
import type { TestContext } from 'node:test';
import { buildTestApp, type TestApp, type TestAppOptions } from './app.ts';
import { linkOf, startSmtpSink, type SmtpSink } from './smtp-sink.ts';

export interface MailTestApp extends TestApp {
  sink: SmtpSink;
}

/** A test app whose mail goes over real SMTP to a sink on 127.0.0.1. */
export async function buildMailTestApp(
  t: TestContext,
  overrides: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<MailTestApp> {
  const sink = await startSmtpSink(t);
  const testApp = await buildTestApp(
    t,
    { SMTP_URL: sink.url, PUBLIC_BASE_URL: 'https://img.example.test', ...overrides },
    'free',
    options,
  );
  return { ...testApp, sink };
}

export function postJson(
  app: FastifyInstance,
  url: string,
  payload: unknown,
  headers: Record<string, string> = {},
) {
  return app.inject({ method: 'POST', url, payload: payload as object, headers });
}

/** Requests a link for `email` and returns the verify path of the mail that arrives for it. */
export async function requestLink(
  { app, ctx, sink }: MailTestApp,
  email: string,
  endpoint: '/v1/signup' | '/v1/keys/recover' = '/v1/signup',
) {
  const before = sink.messages.length;
  const res = await postJson(app, endpoint, { email });
  if (res.statusCode !== 202) throw new Error(`${endpoint} answered ${res.statusCode}: ${res.body}`);
  await ctx.mailer.idle();
  const mail = (await sink.waitForMessages(before + 1))[before];
  if (!mail) throw new Error('no mail arrived');
  return { mail, ...linkOf(mail) };
}

/** GET of a verify path as an API client (no Accept header, like curl). */
export function verify(app: FastifyInstance, path: string, accept?: string) {
  return app.inject({ method: 'GET', url: path, headers: accept ? { accept } : {} });
}
