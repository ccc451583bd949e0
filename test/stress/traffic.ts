// Requests of the stress run (valid and hostile kinds), sent with undici, and the tally of every answer.
import { Agent, request, type Dispatcher } from 'undici';
import { gifFrameBomb } from '../helpers/animations.ts';
import { corpus } from '../helpers/corpus.ts';
import { imageForm } from '../helpers/multipart.ts';
import { DEV_KEY } from './server-process.ts';

export class Tally {
  requests = 0;
  /** 200s of POST /v1/image (the answers that count a quota unit). */
  ok = 0;
  status500 = 0;
  transportErrors = 0;
  readonly byCode = new Map<string, number>();

  record(status: number, code: string, isImage = true): void {
    this.requests++;
    if (status === 200 && isImage) this.ok++;
    if (status === 500) this.status500++;
    this.byCode.set(code, (this.byCode.get(code) ?? 0) + 1);
  }

  transportError(): void {
    this.transportErrors++;
  }
}

export interface Answer {
  status: number;
  code: string;
  isImage: boolean;
}

const auth = { authorization: `Bearer ${DEV_KEY}` };
const forms = {
  valid: () => imageForm(corpus('hopper.jpg'), { resize: { w: 64 }, format: 'webp', quality: 60 }),
  invalidOps: () => imageForm(corpus('hopper.jpg'), { resize: { w: 64, crop: true } }),
  corrupt: () => imageForm(corpus('broken_data_stream.png'), {}),
  bomb: () => imageForm(corpus('synthetic-bomb-header-65535x65535.png'), {}),
  slow: () =>
    imageForm(corpus('synthetic-limit-8000x5000.png'), { resize: { w: 6000 }, format: 'webp', quality: 90 }),
};

/** The raw body, info, position and animation paths, sent as raw bodies (operations in the query): path, body and operations. */
const rawBodies = {
  rawValid: () => ({
    path: '/v1/image',
    body: corpus('hopper.jpg'),
    ops: { resize: { w: 64, h: 64, fit: 'cover', position: 'attention' } },
  }),
  animated: () => ({
    path: '/v1/image',
    body: corpus('rotating-squares.gif'),
    ops: { resize: { w: 40 }, format: 'webp' },
  }),
  frameBomb: () => ({ path: '/v1/image', body: gifFrameBomb(3000, 1000), ops: { format: 'webp' } }),
  info: () => ({ path: '/v1/image/info', body: corpus('Landscape_1.jpg'), ops: { resize: { w: 64 } } }),
};
type RawKind = keyof typeof rawBodies;
const isRawKind = (kind: string): kind is RawKind => kind in rawBodies;

export type Kind = keyof typeof forms | RawKind | 'noAuth' | 'wrongType' | 'healthz';
export const MIXED_KINDS: Kind[] = [
  'valid',
  'valid',
  'valid',
  'invalidOps',
  'corrupt',
  'bomb',
  'noAuth',
  'wrongType',
  'healthz',
  'rawValid',
  'animated',
  'frameBomb',
  'info',
];

/** Sends one request of `kind`, reads the whole answer and records it; transport errors are counted apart. */
export async function send(
  url: string,
  kind: Kind,
  tally: Tally,
  options: { dispatcher?: Dispatcher; signal?: AbortSignal } = {},
): Promise<Answer | undefined> {
  const common = {
    dispatcher: options.dispatcher,
    signal: options.signal,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  };
  try {
    const res =
      kind === 'healthz'
        ? await request(`${url}/healthz`, common)
        : isRawKind(kind)
          ? await (() => {
              const { path, body, ops } = rawBodies[kind]();
              const query = `?operations=${encodeURIComponent(JSON.stringify(ops))}`;
              const headers = { ...auth, 'content-type': 'application/octet-stream' };
              return request(`${url}${path}${query}`, { ...common, method: 'POST', headers, body });
            })()
          : kind === 'wrongType'
            ? await request(`${url}/v1/image`, {
                ...common,
                method: 'POST',
                headers: { ...auth, 'content-type': 'text/plain' },
                body: 'hello',
              })
            : await (() => {
                const form = forms[kind === 'noAuth' ? 'valid' : kind]();
                const headers = kind === 'noAuth' ? form.headers : { ...form.headers, ...auth };
                return request(`${url}/v1/image`, { ...common, method: 'POST', headers, body: form.payload });
              })();
    const body = Buffer.from(await res.body.arrayBuffer());
    let code = String(res.statusCode);
    // A probe's 200 counts no quota unit: it is tallied apart from the images.
    const isImage = kind !== 'healthz' && kind !== 'info';
    if (res.statusCode === 200)
      code = kind === 'healthz' ? 'healthz 200' : kind === 'info' ? 'info 200' : 'ok';
    else if (String(res.headers['content-type']).startsWith('application/json')) {
      code = String(
        (JSON.parse(body.toString()) as { error?: { code?: string } }).error?.code ?? res.statusCode,
      );
    } else code = `non-json-${res.statusCode}`;
    tally.record(res.statusCode, code, isImage);
    return { status: res.statusCode, code, isImage };
  } catch {
    tally.transportError();
    return undefined;
  }
}

/** `workers` loops sending random kinds until `until()` says stop. */
export async function mixedTraffic(
  url: string,
  tally: Tally,
  workers: number,
  until: () => boolean,
  kinds = MIXED_KINDS,
) {
  const agent = new Agent({ connections: workers });
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!until()) {
        const kind = kinds[Math.floor(Math.random() * kinds.length)] ?? 'valid';
        if ((await send(url, kind, tally, { dispatcher: agent })) === undefined && until()) return;
      }
    }),
  );
  await agent.close().catch(() => {});
}
