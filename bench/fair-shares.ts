// owns: the fair-shares section: a victim account's small jobs and delivery misses, one every half second, while each
// attack on the machine's shares runs with one and with two attacker keys (src/scheduler.ts, docs/security.md).
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { replaceAccountKey } from '../src/accounts/key-issuer.ts';
import { deliveryPath, type DeliveryOptions } from '../src/delivery/url.ts';
import { openStore } from '../src/store/db.ts';
import { findOrCreateAccount } from '../src/store/accounts.ts';
import { webpFrameBomb } from '../test/helpers/animations.ts';
import { tiffPageBomb } from '../test/helpers/bombs.ts';
import { noiseImage } from '../test/helpers/images.ts';
import { fmt, table } from './report.ts';
import type { Section } from './section.ts';
import { startService, type ServiceProcess } from './service.ts';

const ENV = {
  MAX_CONCURRENT_JOBS: '2',
  PROCESS_TIMEOUT_MS: '5000',
  FETCH_TIMEOUT_MS: '3000',
  FETCH_ALLOW_CIDRS: '127.0.0.0/8',
};
const VICTIM_EVERY_MS = 500;

interface Inputs {
  small: Buffer;
  /** 1 MP of noise: a blur of 1000 runs past any deadline. */
  noise: Buffer;
  /** 12 MP of noise (7 MB): a blur of 50 takes seconds, then answers 200. */
  photo: Buffer;
  overlayBomb: Buffer;
  tiffPages: Buffer;
}

interface Target {
  service: ServiceProcess;
  origin: string;
  keyOf(email: string): Promise<string>;
}

/** One attacker key's traffic: `loops` loops of `send`, each sent again as soon as it answers. */
interface Attack {
  name: string;
  what: string;
  loops: number;
  prepare(target: Target, key: string, inputs: Inputs): Promise<(i: number) => Promise<string>>;
}

const noise = (side: number) => noiseImage(side).jpeg({ quality: 90 }).toBuffer();

/** What an answer was: its status when a success, else its error code (`busy`, `fetch_busy`, `process_timeout`…). */
async function status(answer: Promise<Response>): Promise<string> {
  const res = await answer;
  if (res.ok) {
    await res.arrayBuffer();
    return String(res.status);
  }
  const body = (await res.json().catch(() => ({}))) as { error?: { code?: string } };
  return body.error?.code ?? String(res.status);
}

function upload(target: Target, key: string, path: string, bytes: Buffer, method = 'POST') {
  return status(
    fetch(`${target.service.origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(bytes),
    }),
  );
}

const ops = (operations: object) => `?operations=${encodeURIComponent(JSON.stringify(operations))}`;

async function deliveryUrlOf(target: Target, key: string) {
  const res = await fetch(`${target.service.origin}/v1/delivery/secret`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  const { accountId, secret } = (await res.json()) as { accountId: string; secret: string };
  return (source: string, options: DeliveryOptions) =>
    `${target.service.origin}${deliveryPath(accountId, secret, source, options)}`;
}

const ATTACKS: Attack[] = [
  {
    name: 'timing-out jobs',
    what: '1 MP noise JPEG with `{"blur":1000}`, 2 at a time per key (each runs to the deadline)',
    loops: 2,
    prepare: async (target, key, inputs) => () =>
      upload(target, key, `/v1/image${ops({ blur: 1000 })}`, inputs.noise),
  },
  {
    name: 'anonymous failing delivery URLs',
    what: "two of the key's delivery URLs with `blur:1000`, fetched with no key (each a failing miss)",
    loops: 2,
    prepare: async (target, key) => {
      const urlOf = await deliveryUrlOf(target, key);
      return (i) => status(fetch(urlOf(`${target.origin}/noise-${i % 2}.jpg`, { blur: 1000 })));
    },
  },
  {
    name: 'uncacheable remakes',
    what: 'delivery URLs with `blur:50` on 12 MP of noise, a new width each time (every one a 200 miss)',
    loops: 2,
    prepare: async (target, key) => {
      const urlOf = await deliveryUrlOf(target, key);
      return (i) => status(fetch(urlOf(`${target.origin}/photo.jpg`, { blur: 50, w: 1000 + i })));
    },
  },
  {
    name: 'overlay bombs',
    what: 'PUT /v1/overlays of a 1 MB WebP of 11,000 frames, 4 loops per key',
    loops: 4,
    prepare: async (target, key, inputs) => () =>
      upload(target, key, '/v1/overlays/mark', inputs.overlayBomb, 'PUT'),
  },
  {
    name: 'TIFF pages through info',
    what: 'POST /v1/image/info of a 10 MB TIFF of 90,000 one-pixel pages, 4 loops per key',
    loops: 4,
    prepare: async (target, key, inputs) => () => upload(target, key, '/v1/image/info', inputs.tiffPages),
  },
  {
    name: 'slow fetch chains',
    what: 'POST /v1/image by url of an origin redirecting to itself every second, 2 loops per key (fetch_timeout)',
    loops: 2,
    prepare: async (target, key) => (i) =>
      status(
        fetch(`${target.service.origin}/v1/image`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: `${target.origin}/slow/${key.slice(-6)}-${i}`, operations: {} }),
        }),
      ),
  },
];

/** The origin of every url and delivery source: the images at once, /slow/* a redirect to itself after 1 s. */
async function startOrigin(inputs: Inputs): Promise<{ origin: string; server: Server }> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    if (url.startsWith('/slow/')) {
      setTimeout(() => res.writeHead(302, { location: url }).end(), 1000).unref();
      return;
    }
    const body = url.startsWith('/noise')
      ? inputs.noise
      : url.startsWith('/photo')
        ? inputs.photo
        : inputs.small;
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Runs `send` in `loops` loops until stopped; its answers. */
function loop(loops: number, send: (i: number) => Promise<string>) {
  let stopped = false;
  let n = 0;
  const statuses: string[] = [];
  const running = Array.from({ length: loops }, async () => {
    while (!stopped) statuses.push(await send(n++).catch(() => 'no answer'));
  });
  return async () => {
    stopped = true;
    await Promise.all(running);
    return statuses;
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Outcome {
  victimOk: number;
  /** The victim's other answers, by error code. */
  victimOther: Map<string, number>;
  victimAll: number;
  p50: number;
  p95: number;
  attackerCpuS: number;
  attackerUnits: number;
  attackerAnswers: Map<string, number>;
}

async function underAttack(
  target: Target,
  inputs: Inputs,
  attack: Attack,
  keys: string[],
  victimKey: string,
  seconds: number,
): Promise<Outcome> {
  const victimUrl = await deliveryUrlOf(target, victimKey);
  const sends = await Promise.all(keys.map((key) => attack.prepare(target, key, inputs)));
  const cpuAtStart = target.service.cpuMs();
  const stops = sends.map((send) => loop(attack.loops, send));
  await sleep(2000);
  const victim: Promise<{ status: string; ms: number }>[] = [];
  const requests = Math.round((seconds * 1000) / VICTIM_EVERY_MS);
  const tag = Date.now();
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    const send =
      i % 2 === 0
        ? upload(
            target,
            victimKey,
            `/v1/image${ops({ resize: { w: 16 + (i % 40) }, format: 'webp' })}`,
            inputs.small,
          )
        : status(fetch(victimUrl(`${target.origin}/small-${tag}.jpg`, { w: 20 + i })));
    victim.push(send.catch(() => 'no answer').then((s) => ({ status: s, ms: performance.now() - started })));
    await sleep(VICTIM_EVERY_MS);
  }
  const answers = await Promise.all(victim);
  const attacker = (await Promise.all(stops.map((stop) => stop()))).flat();
  const cpuMs = target.service.cpuMs() - cpuAtStart;
  const latencies = answers.map((a) => a.ms).sort((a, b) => a - b);
  return {
    victimOk: answers.filter((a) => a.status === '200').length,
    victimOther: countByStatus(answers.map((a) => a.status).filter((s) => s !== '200')),
    victimAll: answers.length,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    attackerCpuS: cpuMs / 1000,
    // Overlay stores and info probes count no unit; a 200 of a job or a delivery miss counts one.
    attackerUnits:
      attack.name === 'overlay bombs' || attack.name.startsWith('TIFF')
        ? 0
        : (countByStatus(attacker).get('200') ?? 0),
    attackerAnswers: countByStatus(attacker),
  };
}

function countByStatus(statuses: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return counts;
}

const counted = (counts: Map<string, number>) =>
  [...counts].map(([answer, n]) => `${n}× ${answer}`).join(', ') || '–';

export const fairSharesSection: Section = {
  heading: 'Fair shares: a victim account under each attack',
  question: 'Stress and faults',
  about:
    "a victim's small jobs and delivery misses every 0.5 s under six attacks, one and two attacker keys (~6 min)",
  async run(ctx) {
    const seconds = ctx.quick ? 4 : 15;
    const inputs: Inputs = {
      small: await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3a7' } })
        .jpeg()
        .toBuffer(),
      noise: await noise(1000),
      photo: await noise(3500),
      overlayBomb: await webpFrameBomb(11_000),
      tiffPages: tiffPageBomb(90_000),
    };
    const { origin, server } = await startOrigin(inputs);
    const rows: (string | number)[][] = [];
    try {
      for (const attack of ATTACKS) {
        for (const attackers of [1, 2]) {
          // A fresh service per run, so no attack's recent cost carries into the next.
          const dir = mkdtempSync(join(tmpdir(), 'imgpipe-bench-fair-'));
          const databaseUrl = `sqlite:${join(dir, 'fair.db')}`;
          const service = await startService({ ...ENV, DATABASE_URL: databaseUrl });
          const store = openStore(databaseUrl, { poolSize: 1, statementTimeoutMs: 5000 });
          const target: Target = {
            service,
            origin,
            keyOf: async (email) =>
              replaceAccountKey(store.db, (await findOrCreateAccount(store.db, email, 'free')).id),
          };
          try {
            const keys = await Promise.all(
              Array.from({ length: attackers }, (_, i) => target.keyOf(`attacker-${i}@example.com`)),
            );
            const victimKey = await target.keyOf('victim@example.com');
            const out = await underAttack(target, inputs, attack, keys, victimKey, seconds);
            rows.push([
              attack.name,
              attackers,
              `${fmt.n((100 * out.victimOk) / out.victimAll, 0)} % (${out.victimOk}/${out.victimAll})`,
              counted(out.victimOther),
              fmt.n(out.p50 / 1000, 2),
              fmt.n(out.p95 / 1000, 2),
              counted(out.attackerAnswers),
              fmt.n(out.attackerCpuS, 1),
              out.attackerUnits === 0 ? '∞ (no unit)' : fmt.n(out.attackerCpuS / out.attackerUnits, 2),
            ]);
          } finally {
            await store.close();
            await service.stop();
          }
        }
      }
    } finally {
      server.closeAllConnections();
      server.close();
    }
    return {
      method: [
        `MAX_CONCURRENT_JOBS=2, PROCESS_TIMEOUT_MS=5000, FETCH_TIMEOUT_MS=3000; a fresh service (SQLite) per row.`,
        `The victim (its own free key) sends, every ${VICTIM_EVERY_MS} ms for ${seconds} s whether or not the last has answered, a 64×64 JPEG upload resized to WebP and a delivery miss of a small image (a new width each time), in turn; the attack starts 2 s before it and runs until it ends.`,
        'Attacker CPU: the service (and its children) over the window, victim included (its share is small); per unit charged: that CPU over the attacker 200s that count a unit (0 for overlays and info, which count none).',
        ...ATTACKS.map((a) => `${a.name}: ${a.what}.`),
      ],
      body: table(
        [
          'attack',
          'attacker keys',
          'victim 200',
          'victim others',
          'victim p50 s',
          'victim p95 s',
          'attacker answers',
          'service CPU s',
          'CPU s per unit charged',
        ],
        rows,
      ),
    };
  },
};
