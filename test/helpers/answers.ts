// Checks that an answer of POST /v1/image is one the API documents: a 200 image, or a JSON error whose code
// is in ERROR_CODES with that exact status and in the route's status table (IMAGE_STATUS_TABLE). Also a bounded wait for inject.
import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '../../src/errors.ts';
import { IMAGE_STATUS_TABLE } from '../../src/http/routes/image.ts';

/** The codes of the status table of POST /v1/image (internal_error excluded on purpose). */
export const IMAGE_ENDPOINT_CODES: ReadonlySet<string> = new Set<ErrorCode>(
  IMAGE_STATUS_TABLE.filter((code) => code !== 'internal_error'),
);

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
}

export function fromInject(res: LightMyRequestResponse): Answer {
  return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
}

/**
 * Asserts the answer is documented and returns 'ok' for a 200 or the error code. `allowed` narrows the
 * accepted codes further (e.g. only image_too_large and unprocessable_image for corrupt images).
 */
export function documentedAnswer(answer: Answer, what: string, allowed?: readonly string[]): string {
  const label = `${what} → ${answer.status} ${answer.body.subarray(0, 300).toString()}`;
  if (answer.status === 200) {
    assert.match(String(answer.headers['content-type']), /^image\//, label);
    assert.ok(answer.body.length > 0, label);
    return 'ok';
  }
  assert.match(String(answer.headers['content-type']), /^application\/json/, label);
  const parsed = JSON.parse(answer.body.toString()) as { error?: { code?: unknown; message?: unknown } };
  const code = String(parsed.error?.code);
  assert.ok(IMAGE_ENDPOINT_CODES.has(code), `undocumented code: ${label}`);
  assert.equal(answer.status, ERROR_CODES[code as ErrorCode], `status does not match ERROR_CODES: ${label}`);
  assert.ok(typeof parsed.error?.message === 'string' && parsed.error.message.length > 0, label);
  if (allowed) assert.ok(allowed.includes(code), `code not allowed here: ${label}`);
  return code;
}

/** inject() with a bounded wait: a request that never gets an answer fails the test instead of hanging it. */
export async function injectBounded(
  app: FastifyInstance,
  options: InjectOptions,
  ms = 60_000,
): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms (hang)`)), ms);
  });
  try {
    return await Promise.race([app.inject(options), hang]);
  } finally {
    clearTimeout(timer);
  }
}
