// owns: what Node's HTTP server would otherwise answer by itself about a request's head (an Expect it cannot meet,
// an HTTP/1.1 request without Host): decided here, so the answer goes through the one error handler with the error
// object, the security headers, X-Request-Id and a log line, instead of Node's bare 417 or 400.
import type { IncomingHttpHeaders } from 'node:http';
import type { ApiError } from '../errors.ts';
import { expectationFailed, missingHost } from './request-errors.ts';

/** Node's own test of a 100-continue expectation (lib/_http_server.js), so the two agree on what is met. */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/** The error a request's head earns before any route reads it; undefined for a head Node would pass on. */
export function requestHeadProblem(httpVersion: string, headers: IncomingHttpHeaders): ApiError | undefined {
  if (httpVersion !== '1.1') return undefined;
  if (headers.host === undefined) return missingHost();
  const expect = headers.expect;
  if (expect !== undefined && !CONTINUE.test(expect)) return expectationFailed(expect);
  return undefined;
}
