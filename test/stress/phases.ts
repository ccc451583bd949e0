// The abusive-client phases of the stress run. Each is bounded in count and time and returns what it saw.
import { connect, type Socket } from 'node:net';
import { Agent } from 'undici';
import { corpus } from '../helpers/corpus.ts';
import { DEV_KEY } from './server-process.ts';
import { mixedTraffic, send, Tally, type Kind } from './traffic.ts';

export interface PhaseResult {
  name: string;
  summary: string;
  problems: string[];
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens an upload whose Content-Length promises far more than is sent; resolves with what the server answered. */
function partialUpload(url: string, behaviour: 'drip' | 'silent' | 'disconnect'): Promise<string> {
  const { port } = new URL(url);
  const image = corpus('Landscape_1.jpg');
  return new Promise((resolve) => {
    let received = '';
    let drip: NodeJS.Timeout | undefined;
    const socket: Socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST /v1/image HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${DEV_KEY}\r\n` +
          'Content-Type: multipart/form-data; boundary=stress\r\nContent-Length: 1000000\r\n\r\n' +
          '--stress\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\n',
      );
      socket.write(image.subarray(0, behaviour === 'drip' ? 10 : image.length / 2));
      if (behaviour === 'drip') drip = setInterval(() => socket.writable && socket.write('x'), 1000);
      if (behaviour === 'disconnect') setTimeout(() => socket.destroy(), 200);
    });
    const giveUp = setTimeout(() => socket.destroy(), 60_000);
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(drip);
      clearTimeout(giveUp);
      resolve(received);
    });
  });
}

/** Slow bodies (1 byte/s), uploads that stop midway (silent or disconnecting), while others are served. */
export async function slowClients(url: string, tally: Tally): Promise<PhaseResult> {
  const behaviours = ['drip', 'silent', 'disconnect'] as const;
  const clients = behaviours.flatMap((b) =>
    Array.from({ length: 5 }, () => ({ b, answer: partialUpload(url, b) })),
  );
  let done = false;
  const others = new Tally();
  const traffic = mixedTraffic(url, others, 2, () => done, ['valid', 'healthz']);
  const answers = await Promise.all(clients.map(async (c) => ({ b: c.b, answer: await c.answer })));
  done = true;
  await traffic;
  merge(tally, others);
  const cutOff = answers.filter(
    (a) => a.b !== 'disconnect' && /^HTTP\/1\.1 408[\s\S]*"request_timeout"/.test(a.answer),
  );
  const problems: string[] = [];
  if (cutOff.length !== 10)
    problems.push(`${10 - cutOff.length} slow or stalled uploads were not cut off with a JSON 408`);
  if (others.ok === 0) problems.push('no other upload was served while slow clients were connected');
  return {
    name: 'slow clients',
    summary: `5 bodies at 1 byte/s + 5 stalled uploads cut off with 408 request_timeout: ${cutOff.length}/10; 5 uploads abandoned midway; other clients meanwhile: ${others.ok} uploads answered 200, ${others.requests} requests in all`,
    problems,
  };
}

/** Clients that disconnect while their image is processed (the slot and the unit must come back). */
export async function disconnects(url: string, tally: Tally): Promise<PhaseResult> {
  let abandoned = 0;
  for (let round = 0; round < 6; round++) {
    // An abandoned job keeps its slot until libvips has finished, so each round waits for free slots first.
    await untilNotBusy(url, tally);
    const answers = await Promise.all(
      [0, 1].map(async (i) => {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 100 + (round * 2 + i) * 80);
        return send(url, 'slow', new Tally(), { signal: controller.signal });
      }),
    );
    for (const answer of answers) {
      if (answer) tally.record(answer.status, answer.code);
      else abandoned++;
    }
  }
  return {
    name: 'disconnects',
    summary: `${abandoned} of 12 slow jobs abandoned by their client while uploading or processing`,
    problems: abandoned === 0 ? ['no job was abandoned: the phase tested nothing'] : [],
  };
}

/** Sends small valid uploads until one is not busy (bounded: 60 s). */
async function untilNotBusy(url: string, tally: Tally): Promise<void> {
  for (let i = 0; i < 120; i++) {
    if ((await send(url, 'valid', tally))?.code !== 'busy') return;
    await pause(500);
  }
}

/** 1000 concurrent connections of mixed requests while a probe checks /healthz and a valid upload keep answering. */
export async function flood(url: string, tally: Tally): Promise<PhaseResult> {
  const agent = new Agent({ connections: 1100, pipelining: 1 });
  const kinds: Kind[] = ['valid', 'valid', 'valid', 'invalidOps', 'noAuth', 'healthz'];
  const local = new Tally();
  let done = false;
  const probe = new Tally();
  const probing = (async () => {
    while (!done) {
      await send(url, 'healthz', probe);
      await pause(250);
    }
  })();
  await Promise.all(
    Array.from({ length: 1000 }, (_, i) =>
      send(url, kinds[i % kinds.length] ?? 'valid', local, { dispatcher: agent }),
    ),
  );
  done = true;
  await probing;
  await agent.close().catch(() => {});
  merge(tally, local);
  const codes = [...local.byCode].map(([code, n]) => `${code} ${n}`).join(', ');
  const problems: string[] = [];
  if (probe.byCode.get('healthz 200') !== probe.requests || probe.requests === 0)
    problems.push(`/healthz failed during the flood: ${probe.ok}/${probe.requests}`);
  return {
    name: 'flood',
    summary: `1000 concurrent connections of mixed requests (${codes}; ${local.transportErrors} transport errors); /healthz probed meanwhile: ${probe.byCode.get('healthz 200') ?? 0}/${probe.requests} × 200`,
    problems,
  };
}

/**
 * No leaked processing slot: MAX_CONCURRENT_JOBS slow jobs sent at once are all processed (none busy). Jobs of
 * earlier phases may still hold slots for a while (libvips finishes its work), so rounds repeat up to 60 s.
 */
export async function leakedSlots(url: string, jobs: number, tally: Tally): Promise<number> {
  let busy = jobs;
  for (let round = 0; round < 20 && busy > 0; round++) {
    const answers = await Promise.all(Array.from({ length: jobs }, () => send(url, 'slow', tally)));
    busy = answers.filter((a) => a?.code === 'busy').length;
    if (busy > 0) await pause(3000);
  }
  return busy;
}

export function merge(into: Tally, from: Tally): void {
  into.requests += from.requests;
  into.ok += from.ok;
  into.status500 += from.status500;
  into.transportErrors += from.transportErrors;
  for (const [code, n] of from.byCode) into.byCode.set(code, (into.byCode.get(code) ?? 0) + n);
}
