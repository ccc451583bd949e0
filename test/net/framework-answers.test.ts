// What Node's HTTP server would answer by itself, on a real socket: every such answer carries the error object, the
// security headers and X-Request-Id, and a connection gets no answer it did not ask for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SECURITY_HEADERS } from '../../src/http/security-headers.ts';
import { startTestServer } from '../helpers/app.ts';
import { rawExchange } from '../helpers/http-client.ts';

/** The answers in `raw` (status line, lower-cased headers, body by Content-Length), in order. */
function answersOf(raw: string) {
  const answers = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    const [statusLine = '', ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    const length = Number(headers['content-length'] ?? 0);
    const body = rest.slice(headEnd + 4, headEnd + 4 + length);
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body });
    rest = rest.slice(headEnd + 4 + length);
  }
  return answers;
}

/** The one answer of `raw`, asserted to be a JSON error with every security header; its status and code. */
function errorAnswer(raw: string) {
  const answers = answersOf(raw);
  assert.equal(answers.length, 1, raw.slice(0, 600));
  const answer = answers[0]!;
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    assert.equal(answer.headers[name.toLowerCase()], value, name);
  }
  assert.ok(answer.headers['x-request-id'], 'X-Request-Id');
  const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
  assert.ok(body.error.message.length > 0);
  return { status: answer.status, code: body.error.code };
}

test('an Expect other than 100-continue is 417 expectation_failed, with the error object and the security headers', async (t) => {
  const server = await startTestServer(t);
  const raw = await rawExchange(
    server.url,
    'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 200-foo\r\nConnection: close\r\n\r\n',
  );
  assert.deepEqual(errorAnswer(raw), { status: 417, code: 'expectation_failed' });
});

test('Expect: 100-continue is met: 100 Continue, then the answer', async (t) => {
  const server = await startTestServer(t);
  const raw = await rawExchange(
    server.url,
    'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n',
  );
  assert.match(raw, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
});

test('an HTTP/1.1 request without Host is 400 invalid_request, with the error object and the security headers', async (t) => {
  const server = await startTestServer(t);
  const raw = await rawExchange(server.url, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
  assert.deepEqual(errorAnswer(raw), { status: 400, code: 'invalid_request' });
  const old = await rawExchange(server.url, 'GET /healthz HTTP/1.0\r\n\r\n');
  assert.match(old, /^HTTP\/1\.1 200 /, 'HTTP/1.0 needs no Host');
});

test('bytes that break the parser after an answer started get no second answer on that connection', async (t) => {
  const server = await startTestServer(t);
  // The route refuses the body's missing Content-Type at once; its unknown Transfer-Encoding then breaks the parser.
  const raw = await rawExchange(
    server.url,
    'POST /v1/signup HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\nxyz',
  );
  assert.deepEqual(errorAnswer(raw), { status: 400, code: 'invalid_request' });
});
