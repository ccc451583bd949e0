// owns: `node --import tsx bench/small-url.ts [--requests N] [--rounds R] [--warm-up W]`: CPU per image of POST /v1/image by URL
// (a local origin, 2 connections) against raw sharp in this process with the job's own decoder settings, for a small
// (640×427 → 320 px) and a large (3000×2000 → 800 px) JPEG, interleaved in rounds so that the machine's load moves
// both sides alike. The service's CPU is its whole process tree's (/proc); raw sharp's is this process's
// (process.cpuUsage) while it does nothing else.
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { sharpInputOptions } from '../src/pipeline/process.ts';
import { jpegOfSize, loadBaseImage } from './inputs.ts';
import { httpClient, postRequests, type PreparedRequest } from './load.ts';
import { startService } from './service.ts';

const CONNECTIONS = 2;
const MAX_INPUT_PIXELS = 100_000_000;

interface SmallUrlCase {
  name: string;
  width: number;
  height: number;
  resizeTo: number;
}

const CASES: SmallUrlCase[] = [
  { name: 'small', width: 640, height: 427, resizeTo: 320 },
  { name: 'large', width: 3000, height: 2000, resizeTo: 800 },
];

export interface SmallUrlRow {
  name: string;
  serviceCpuMsPerImage: number;
  sharpCpuMsPerImage: number;
  ratio: number;
}

function operationsFor(c: SmallUrlCase) {
  return { resize: { w: c.resizeTo }, format: 'jpeg', quality: 80 };
}

/** What raw sharp does for the same job: one instance, the job's decoder settings, resize, JPEG q80. */
function rawSharp(input: Buffer, c: SmallUrlCase): Promise<Buffer> {
  return sharp(input, sharpInputOptions(MAX_INPUT_PIXELS))
    .resize({ width: c.resizeTo, withoutEnlargement: true })
    .jpeg({ quality: 80 })
    .toBuffer();
}

async function rawSharpCpuMs(input: Buffer, c: SmallUrlCase, count: number): Promise<number> {
  const start = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, lane) => {
      for (let i = lane; i < count; i += CONNECTIONS) await rawSharp(input, c);
    }),
  );
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** A keep-alive origin serving each case's JPEG at /<name>.jpg, as a CDN or bucket would. */
async function startOrigin(images: Map<string, Buffer>): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const image = images.get(req.url ?? '');
    if (!image) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': image.length }).end(image);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { server, origin: `http://127.0.0.1:${port}` };
}

/**
 * Runs the comparison and returns CPU ms per image of each side and their ratio (service / raw sharp), each the
 * median over the rounds. `env` adds to the service's environment.
 */
export async function smallUrlSection(
  options: {
    requests?: number;
    rounds?: number;
    warmUp?: number;
    env?: Record<string, string>;
    log?: (line: string) => void;
  } = {},
): Promise<SmallUrlRow[]> {
  const requests = options.requests ?? 200;
  const rounds = options.rounds ?? 3;
  const warmUp = options.warmUp ?? 3000;
  const log = options.log ?? (() => {});
  const base = (await loadBaseImage(false)).data;
  const inputs = new Map<string, Buffer>();
  for (const c of CASES) inputs.set(`/${c.name}.jpg`, await jpegOfSize(base, c.width, c.height));
  const origin = await startOrigin(inputs);
  const service = await startService({
    FETCH_ALLOW_CIDRS: '127.0.0.1/32',
    MAX_CONCURRENT_JOBS: '2',
    ...options.env,
  });
  const client = httpClient(service.origin, CONNECTIONS);
  try {
    const request = (c: SmallUrlCase): PreparedRequest => ({
      body: Buffer.from(
        JSON.stringify({ url: `${origin.origin}/${c.name}.jpg`, operations: operationsFor(c) }),
      ),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${service.apiKey}` },
    });
    const samples = new Map(CASES.map((c) => [c.name, { service: [] as number[], sharp: [] as number[] }]));
    // Warm-up: V8 still compiles the request path with TurboFan after a thousand requests (about 0.3 ms of CPU per
    // image at 1,600), which a long-running server has long done; libvips' first calls are not per-image cost either.
    for (const c of CASES) {
      const count = c.name === 'small' ? warmUp : Math.ceil(warmUp / 4);
      await postRequests(client, request(c), count, CONNECTIONS);
      await rawSharpCpuMs(inputs.get(`/${c.name}.jpg`)!, c, count);
    }
    for (let round = 0; round < rounds; round++) {
      for (const c of CASES) {
        const count = c.name === 'small' ? requests : Math.ceil(requests / 4);
        const input = inputs.get(`/${c.name}.jpg`)!;
        const sample = samples.get(c.name)!;
        const before = service.cpuMs();
        await postRequests(client, request(c), count, CONNECTIONS);
        sample.service.push((service.cpuMs() - before) / count);
        sample.sharp.push((await rawSharpCpuMs(input, c, count)) / count);
        log(
          `round ${round + 1} ${c.name}: service ${sample.service.at(-1)!.toFixed(2)} ms, sharp ${sample.sharp.at(-1)!.toFixed(2)} ms`,
        );
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    return CASES.map((c) => {
      const sample = samples.get(c.name)!;
      const serviceCpuMsPerImage = median(sample.service);
      const sharpCpuMsPerImage = median(sample.sharp);
      return {
        name: `${c.name} ${c.width}×${c.height} → ${c.resizeTo} px`,
        serviceCpuMsPerImage,
        sharpCpuMsPerImage,
        ratio: serviceCpuMsPerImage / sharpCpuMsPerImage,
      };
    });
  } finally {
    await client.close();
    await service.stop();
    origin.server.close();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '200' },
      rounds: { type: 'string', default: '3' },
      'warm-up': { type: 'string', default: '3000' },
    },
  });
  const rows = await smallUrlSection({
    requests: Number(values.requests),
    rounds: Number(values.rounds),
    warmUp: Number(values['warm-up']),
    log: (line) => console.error(line),
  });
  console.log('| image by URL | service CPU ms/img | raw sharp CPU ms/img | ratio |');
  console.log('|---|--:|--:|--:|');
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.serviceCpuMsPerImage.toFixed(2)} | ${r.sharpCpuMsPerImage.toFixed(2)} | ${r.ratio.toFixed(2)} |`,
    );
  }
}
