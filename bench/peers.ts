// owns: the peers section (`npm run bench -- --only peers`): imgpipe beside raw sharp, ipx, Next.js's image
// optimizer and nginx's image_filter on the same resize by URL, in interleaved rounds, each server's whole process
// tree measured from /proc. The peers live in bench/peers/ (their own package.json and lockfile), never in the service.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { deliveryPath } from '../src/delivery/url.ts';
import { readJpegFrame } from '../src/pipeline/input-header.ts';
import type { ProcessLimits } from '../src/pipeline/process.ts';
import { percentile } from './compare.ts';
import { secretOf } from './delivery.ts';
import { jpegOfSize, type BaseImage } from './inputs.ts';
import { closedLoop, startJpegOrigin } from './load.ts';
import { fmt, table } from './report.ts';
import type { Section } from './section.ts';
import { childPids, freePort, processCpuMs, startService, statusKb, type ServiceProcess } from './service.ts';
import { rawSharp, workload, type Workload } from './workloads.ts';

const PEERS_DIR = resolve(import.meta.dirname, 'peers');
const NEXT_DIST = join(PEERS_DIR, 'node_modules/.next-build');
const NGINX = '/usr/sbin/nginx';
const IMAGE_FILTER_MODULE = '/usr/lib/nginx/modules/ngx_http_image_filter_module.so';
/** Every side's load and output: 2 connections, JPEG q80. */
const CONNECTIONS = 2;
const QUALITY = 80;

interface Size {
  name: 'large' | 'small';
  /** The origin's path of the source JPEG. */
  file: string;
  width: number;
  workload: Workload;
}

/** A server under test with its client: CONNECTIONS keep-alive sockets, one request in flight on each. */
interface Server {
  pid: number;
  request(options: Omit<Parameters<Pool['request']>[0], 'origin'>): Promise<Answer>;
  /** Closes the client, then stops the server. */
  stop(): Promise<void>;
}

interface Answer {
  status: number;
  body: Buffer;
}

/** One measured line: a way to get the 800 (320) px JPEG, from a server or in-process. */
interface Side {
  label: string;
  /** Sides whose peak RSS is taken together: a miss and its hit, on one server. */
  group: string;
  /** Undefined: raw sharp in the bench process. */
  server?: Server;
  /** `source` is a fresh URL per request on the origin (a miss everywhere), or one fixed URL for the hit sides. */
  fetch(size: Size, source: string): Promise<Answer>;
  hit?: boolean;
  /** Its name in the run's ratios (`peers.<ratio>.<size>.cpu`: its CPU per image ÷ raw sharp's). */
  ratio?: string;
}

interface SegmentFigures {
  images: number;
  seconds: number;
  cpuMs: number;
  latenciesMs: number[];
  outputBytes: number;
  peakRssBytes: number;
}

const runId = randomBytes(4).toString('hex');
let requestCount = 0;
const sourceUrl = (origin: string, size: Size, hit: boolean | undefined) =>
  `${origin}/${size.file}?r=${runId}-${hit ? 'hit' : requestCount++}`;

/** '200' when the answer is a JPEG `width` pixels wide; otherwise why not (a failure of the segment). */
function verdict(answer: Answer, width: number): string {
  if (answer.status !== 200) return String(answer.status);
  const [a, b, c] = answer.body;
  if (a !== 0xff || b !== 0xd8 || c !== 0xff) return 'not a JPEG';
  const frame = readJpegFrame(answer.body);
  return frame?.width === width ? '200' : `width ${frame?.width ?? '?'} instead of ${width}`;
}

function treePids(pid: number): number[] {
  try {
    return [pid, ...childPids(pid).flatMap(treePids)];
  } catch {
    return []; // it exited while it was being read
  }
}

const RSS_SAMPLE_MS = 100;

/** Sum of VmRSS of a process and all its descendants, sampled every RSS_SAMPLE_MS until stopped. */
function sampleTreeRss(pid: number): () => number {
  let peak = 0;
  const sample = () => {
    const rss = treePids(pid).reduce((sum, p) => {
      try {
        return sum + statusKb(p, 'VmRSS') * 1024;
      } catch {
        return sum;
      }
    }, 0);
    peak = Math.max(peak, rss);
  };
  sample();
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  return () => {
    clearInterval(timer);
    sample();
    return peak;
  };
}

async function runSegment(side: Side, size: Size, originUrl: string, ms: number): Promise<SegmentFigures> {
  const pid = side.server?.pid;
  const cpu0 = pid === undefined ? 0 : processCpuMs(pid);
  const stopRss = pid === undefined ? () => NaN : sampleTreeRss(pid);
  let outputBytes = 0;
  const segment = await closedLoop(CONNECTIONS, ms, async () => {
    const answer = await side.fetch(size, sourceUrl(originUrl, size, side.hit));
    const result = verdict(answer, size.width);
    if (result === '200') outputBytes += answer.body.length;
    return result;
  });
  const peakRssBytes = stopRss();
  if (Object.keys(segment.failures).length > 0)
    throw new Error(`${side.label}, ${size.name}: ${JSON.stringify(segment.failures)}`);
  return {
    images: segment.images,
    seconds: segment.elapsedMs / 1000,
    cpuMs: pid === undefined ? segment.benchCpuMs : processCpuMs(pid) - cpu0,
    latenciesMs: segment.latenciesMs,
    outputBytes,
    peakRssBytes,
  };
}

/** The client reads whole bodies (load.ts's httpClient drops them): every answer is checked. */
function withClient(pid: number, origin: string, stop: () => Promise<void>): Server {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 });
  return {
    pid,
    request: async (options) => {
      const res = await pool.request(options);
      return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()) };
    },
    stop: async () => {
      await pool.close();
      await stop();
    },
  };
}

async function waitListening(origin: string, child: ChildProcess, name: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited at start (${child.exitCode})`);
    if (
      await fetch(origin).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not listen within 30 s`);
}

function serverOf(child: ChildProcess, origin: string, cleanUp = () => {}): Server {
  return withClient(child.pid as number, origin, async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    cleanUp();
  });
}

/** Whether the peers are installed (bench/peers/node_modules and nginx's image_filter): `--budget` runs them only then. */
export function peersInstalled(): boolean {
  return existsSync(join(PEERS_DIR, 'node_modules')) && existsSync(IMAGE_FILTER_MODULE);
}

/** `npm ci` of bench/peers when its node_modules is missing: a fresh clone runs the section as is. */
function ensurePeersInstalled(): void {
  if (existsSync(join(PEERS_DIR, 'node_modules'))) return;
  console.error('[peers] npm ci --prefix bench/peers');
  execFileSync('npm', ['ci', '--prefix', PEERS_DIR, '--no-audit', '--no-fund'], { stdio: ['ignore', 2, 2] });
}

/** Debian's nginx and its image_filter module, installed with apt-get when one is missing. */
export function ensureNginx(): void {
  if (existsSync(NGINX) && existsSync(IMAGE_FILTER_MODULE)) return;
  console.error('[peers] apt-get install nginx libnginx-mod-http-image-filter');
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const run = (args: string[]) => {
    const [command, ...rest] = [...sudo, ...args] as [string, ...string[]];
    execFileSync(command, rest, {
      stdio: ['ignore', 2, 2],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  };
  run(['apt-get', 'update']);
  run(['apt-get', 'install', '-y', '--no-install-recommends', 'nginx', 'libnginx-mod-http-image-filter']);
}

/** `next build` once; again only when the app's config or page is newer than the build. */
function ensureNextBuild(): void {
  const buildId = join(NEXT_DIST, 'BUILD_ID');
  const newest = Math.max(
    ...['next.config.mjs', 'pages/index.js'].map((f) => statSync(join(PEERS_DIR, f)).mtimeMs),
  );
  if (existsSync(buildId) && statSync(buildId).mtimeMs > newest) return;
  console.error('[peers] next build');
  execFileSync(process.execPath, ['node_modules/next/dist/bin/next', 'build'], {
    cwd: PEERS_DIR,
    stdio: ['ignore', 2, 2],
    env: { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
  });
}

async function startNodePeer(name: string, args: string[]): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: PEERS_DIR,
    env: { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitListening(origin, child, name);
  return serverOf(child, origin);
}

/** nginx with image_filter before `originUrl`: GET /w320/<file> (or /w800/) answers the origin's /<file> resized. */
export async function startNginx(originUrl: string): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-bench-peers-nginx-'));
  for (const temp of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, temp));
  const port = await freePort();
  const fields: Record<string, string> = { DIR: dir, PORT: String(port), ORIGIN: originUrl };
  const conf = readFileSync(join(PEERS_DIR, 'nginx.conf'), 'utf8').replace(
    /\{\{(\w+)\}\}/g,
    (_, key: string) => fields[key] as string,
  );
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = spawn(NGINX, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
    stdio: 'ignore',
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitListening(origin, child, 'nginx');
  return serverOf(child, origin, () => rmSync(dir, { recursive: true, force: true }));
}

interface SideResult {
  side: Side;
  bySize: Record<Size['name'], SegmentFigures[]>;
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const perSecond = (rounds: SegmentFigures[]) => median(rounds.map((r) => r.images / r.seconds));
const cpuPerImage = (rounds: SegmentFigures[]) => median(rounds.map((r) => r.cpuMs / Math.max(1, r.images)));
/** Each named side's CPU per image ÷ raw sharp's (the first side), per size. */
function peerRatios(results: SideResult[]): Record<string, number> {
  const [raw, ...others] = results;
  if (!raw) return {};
  return Object.fromEntries(
    others.flatMap(({ side, bySize }) =>
      side.ratio === undefined
        ? []
        : (['large', 'small'] as const).map((size) => [
            `peers.${side.ratio}.${size}.cpu`,
            cpuPerImage(bySize[size]) / cpuPerImage(raw.bySize[size]),
          ]),
    ),
  );
}

const peakOf = (results: SideResult[]) =>
  Math.max(...results.flatMap((r) => [...r.bySize.large, ...r.bySize.small].map((s) => s.peakRssBytes)));

/** One row per side: both sizes' img/s, CPU, latencies and output, and the peak RSS of its group's segments. */
function peersTable(results: SideResult[]): string {
  return table(
    [
      '',
      'large: img/s',
      'CPU ms/img',
      'p50 / p95 ms',
      'small: img/s',
      'CPU ms/img',
      'p50 / p95 ms',
      'output kB large / small',
      'peak RSS',
    ],
    results.map(({ side, bySize }) => {
      const figures = (['large', 'small'] as const).map((size) => {
        const rounds = bySize[size];
        const images = rounds.reduce((sum, r) => sum + r.images, 0);
        const latencies = rounds.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
        const bytes = rounds.reduce((sum, r) => sum + r.outputBytes, 0);
        return {
          columns: [
            fmt.n(perSecond(rounds)),
            fmt.n(cpuPerImage(rounds)),
            `${fmt.n(percentile(latencies, 50))} / ${fmt.n(percentile(latencies, 95))}`,
          ],
          outputKb: fmt.n(bytes / Math.max(1, images) / 1024),
        };
      });
      const peak = peakOf(results.filter((r) => r.side.group === side.group));
      return [
        side.label,
        ...figures.flatMap((f) => f.columns),
        figures.map((f) => f.outputKb).join(' / '),
        Number.isFinite(peak) ? fmt.mb(peak) : '– (the bench process)',
      ];
    }),
  );
}

/**
 * The start line's targets, per imgpipe POST side: large images at most 0.8× ipx's CPU, small ones at most
 * nginx/libgd's, peak RSS at most 1.25× ipx's.
 */
function targetLines(results: SideResult[]): string {
  const find = (group: string) => results.find((r) => r.side.group === group);
  const ipx = find('ipx');
  const nginx = find('nginx');
  if (!ipx || !nginx) return '';
  const ipxPeak = peakOf([ipx]);
  const posts = results.filter((r) => r.side.label.startsWith('imgpipe POST'));
  return table(
    ['imgpipe POST', 'large CPU ÷ ipx (≤ 0.8)', 'small CPU ÷ nginx (≤ 1)', 'peak RSS ÷ ipx (≤ 1.25)'],
    posts.map((r) => {
      const large = cpuPerImage(r.bySize.large) / cpuPerImage(ipx.bySize.large);
      const small = cpuPerImage(r.bySize.small) / cpuPerImage(nginx.bySize.small);
      const rss = peakOf(results.filter((o) => o.side.group === r.side.group)) / ipxPeak;
      const mark = (value: number, limit: number) => `${value.toFixed(2)}${value <= limit ? '' : ' ✗'}`;
      return [r.side.label, mark(large, 0.8), mark(small, 1), mark(rss, 1.25)];
    }),
  );
}

export interface PeersOptions {
  rounds: number;
  /** Each side's time per size and round. */
  segmentMs: number;
  /**
   * Each side's time per size before the rounds. A Node server still gets cheaper per image after thousands of
   * requests (V8 optimizing its request path): after 3000 small images by URL, imgpipe's CPU per image still fell from
   * 7.2 to 6.4 ms over the next 3600. Every side gets 10 s, which a long-running server has long had.
   */
  warmMs: number;
}

/** --quick: a harness check in about two minutes; otherwise about nine. */
export const peersOptions = (quick: boolean, budget = false): PeersOptions =>
  quick
    ? { rounds: 2, segmentMs: 1_000, warmMs: 500 }
    : budget
      ? { rounds: 3, segmentMs: 1_500, warmMs: 3_000 }
      : { rounds: 3, segmentMs: 5_000, warmMs: 10_000 };

/**
 * The start lines `--start-lines` measures beside `serve`'s own (bin/serve-environment.js): what each setting given
 * by the operator would cost. glibc's own arena limit is 8 per core (16 here); V8's semi-space grows to 16 MB.
 */
const START_LINE_ALTERNATIVES: Record<string, { GLIBC_TUNABLES: string; NODE_OPTIONS: string }> = {
  'no settings (glibc 16 arenas, V8 16 MB semi-space)': {
    GLIBC_TUNABLES: 'glibc.malloc.arena_max=16',
    NODE_OPTIONS: '--max-semi-space-size=16',
  },
  '1 arena, 16 MB semi-space': {
    GLIBC_TUNABLES: 'glibc.malloc.arena_max=1',
    NODE_OPTIONS: '--max-semi-space-size=16',
  },
  '2 arenas, 1 MB semi-space': {
    GLIBC_TUNABLES: 'glibc.malloc.arena_max=2',
    NODE_OPTIONS: '--max-semi-space-size=1',
  },
  // serve's own line again, in a second instance: how far two identical instances differ in one run.
  "1 arena, 1 MB semi-space (serve's own, again)": {
    GLIBC_TUNABLES: 'glibc.malloc.arena_max=1',
    NODE_OPTIONS: '--max-semi-space-size=1',
  },
  '2 arenas, 4 MB semi-space': {
    GLIBC_TUNABLES: 'glibc.malloc.arena_max=2',
    NODE_OPTIONS: '--max-semi-space-size=4',
  },
};

const postUrl = (service: ServiceProcess, imgpipe: Server) => (size: Size, source: string) =>
  imgpipe.request({
    method: 'POST',
    path: '/v1/image',
    headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: source, operations: size.workload.operations }),
  });

async function startImgpipe(started: Server[], startLine: Record<string, string> = {}) {
  const service = await startService({
    FETCH_ALLOW_CIDRS: '127.0.0.0/8',
    MAX_CONCURRENT_JOBS: String(CONNECTIONS),
    ...startLine,
  });
  const imgpipe = withClient(service.pid, service.origin, service.stop);
  started.push(imgpipe);
  return { service, imgpipe };
}

/** imgpipe's POST under each alternative start line, one instance each. */
async function startLineSides(started: Server[]): Promise<Side[]> {
  const sides: Side[] = [];
  for (const [name, startLine] of Object.entries(START_LINE_ALTERNATIVES)) {
    const { service, imgpipe } = await startImgpipe(started, startLine);
    sides.push({
      label: `imgpipe POST, ${name}`,
      group: name,
      server: imgpipe,
      fetch: postUrl(service, imgpipe),
    });
  }
  return sides;
}

/** The sides in the table's order: raw sharp, imgpipe's two ways (and its start lines), then the peers. */
async function startSides(
  originUrl: string,
  limits: ProcessLimits,
  started: Server[],
  startLines: boolean,
): Promise<Side[]> {
  const { service, imgpipe } = await startImgpipe(started);
  const { accountId, secret } = await secretOf(service);
  const alternatives = startLines ? await startLineSides(started) : [];
  const ipx = await startNodePeer('ipx', ['ipx-server.mjs']);
  started.push(ipx);
  const next = await startNodePeer('next', ['node_modules/next/dist/bin/next', 'start', '-H', '127.0.0.1']);
  started.push(next);
  const nginx = await startNginx(originUrl);
  started.push(nginx);
  const delivery = (size: Size, source: string) =>
    imgpipe.request({
      method: 'GET',
      path: deliveryPath(accountId, secret, source, { w: size.width, f: 'jpeg', q: QUALITY }),
    });
  const nextImage = (size: Size, source: string) =>
    next.request({
      method: 'GET',
      path: `/_next/image?url=${encodeURIComponent(source)}&w=${size.width}&q=${QUALITY}`,
      // Next answers WebP or AVIF to browsers that take them; a JPEG to this Accept.
      headers: { accept: 'image/jpeg' },
    });
  return [
    {
      label: 'raw sharp in-process (reference)',
      group: 'raw sharp',
      fetch: async (size) => ({ status: 200, body: await rawSharp(size.workload, limits) }),
    },
    {
      label: 'imgpipe POST /v1/image url',
      group: 'imgpipe POST',
      ratio: 'imgpipe-post',
      server: imgpipe,
      fetch: postUrl(service, imgpipe),
    },
    ...alternatives,
    {
      label: 'imgpipe delivery URL miss',
      group: 'imgpipe delivery',
      server: imgpipe,
      fetch: delivery,
      ratio: 'imgpipe-delivery-miss',
    },
    {
      label: 'imgpipe delivery URL hit',
      group: 'imgpipe delivery',
      server: imgpipe,
      fetch: delivery,
      hit: true,
    },
    {
      label: `ipx ${peerVersion('ipx')}`,
      group: 'ipx',
      ratio: 'ipx',
      server: ipx,
      fetch: (size, source) =>
        ipx.request({ method: 'GET', path: `/w_${size.width},q_${QUALITY},f_jpeg/${source}` }),
    },
    {
      label: 'Next.js image optimizer miss',
      group: 'next',
      server: next,
      fetch: nextImage,
      ratio: 'next-miss',
    },
    { label: 'Next.js image optimizer hit', group: 'next', server: next, fetch: nextImage, hit: true },
    {
      label: 'nginx image_filter (libgd)',
      group: 'nginx',
      ratio: 'nginx',
      server: nginx,
      fetch: (size, source) => {
        const { pathname, search } = new URL(source);
        return nginx.request({ method: 'GET', path: `/w${size.width}${pathname}${search}` });
      },
    },
  ];
}

export async function measurePeers(
  base: BaseImage,
  limits: ProcessLimits,
  options: PeersOptions,
  startLines = false,
): Promise<{ method: string[]; body: string; ratios: Record<string, number> }> {
  ensurePeersInstalled();
  ensureNginx();
  ensureNextBuild();
  const large = await jpegOfSize(base.data, 3000, 2000);
  const small = await jpegOfSize(base.data, 640, 427);
  const sizeOf = async (name: Size['name'], input: Buffer, width: number): Promise<Size> => ({
    name,
    file: `${name}.jpg`,
    width,
    workload: await workload(name, '', input, {
      resize: { w: width, fit: 'inside' },
      format: 'jpeg',
      quality: QUALITY,
    }),
  });
  const sizes = [await sizeOf('large', large, 800), await sizeOf('small', small, 320)];
  const origin = await startJpegOrigin(
    new Map([
      ['/large.jpg', large],
      ['/small.jpg', small],
    ]),
  );
  const started: Server[] = [];
  rmSync(join(NEXT_DIST, 'cache/images'), { recursive: true, force: true });
  try {
    const sides = await startSides(origin.url, limits, started, startLines);
    const results: SideResult[] = sides.map((side) => ({ side, bySize: { large: [], small: [] } }));
    // A warm-up of every side (V8's JIT, libvips' first calls, the hit sides' first miss), then the rounds.
    for (const side of sides)
      for (const size of sizes) await runSegment(side, size, origin.url, options.warmMs);
    for (let round = 1; round <= options.rounds; round++) {
      console.error(`[peers] round ${round}/${options.rounds}`);
      for (const size of sizes)
        for (const result of results)
          result.bySize[size.name].push(await runSegment(result.side, size, origin.url, options.segmentMs));
    }
    return {
      method: methodLines(base, { large: large.length, small: small.length }, options),
      body: `${peersTable(results)}\n\n${targetLines(results)}`,
      ratios: peerRatios(results),
    };
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    await origin.close();
  }
}

function methodLines(
  base: BaseImage,
  inputBytes: Record<Size['name'], number>,
  options: PeersOptions,
): string[] {
  return [
    `Sources: ${base.description} as a 3000x2000 JPEG (${fmt.kb(inputBytes.large)}) → 800 px ("large") and a` +
      ` 640x427 JPEG (${fmt.kb(inputBytes.small)}) → 320 px ("small"), JPEG q${QUALITY}, by URL from a loopback` +
      ` origin; ${CONNECTIONS} keep-alive connections; ${options.rounds} rounds of ${options.segmentMs / 1000} s per` +
      ` side and size after a ${options.warmMs / 1000} s warm-up; img/s and CPU are medians over the rounds`,
    'A miss fetches a fresh source URL, a hit one answered before; every answer is checked (200, a JPEG of the asked' +
      " width). CPU: the server's whole process tree from /proc, reaped children included (raw sharp: the bench" +
      ' process); peak RSS: its tree, sampled every 100 ms, a miss and its hit together',
    `imgpipe \`serve\` (bench/service.ts, MAX_CONCURRENT_JOBS=${CONNECTIONS}); ipx on node:http with sharp` +
      ` ${peerVersion('sharp')}; Next.js ${peerVersion('next')} \`next start\` with sharp` +
      ` ${peerVersion('next/node_modules/sharp')}, Accept: image/jpeg; nginx ${nginxVersion()} image_filter,` +
      ' 2 workers; setups in bench/peers/',
  ];
}

/** The version of bench/peers/node_modules/<path>. */
function peerVersion(path: string): string {
  const manifest = JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', path, 'package.json'), 'utf8'));
  return String(manifest.version);
}

function nginxVersion(): string {
  // nginx prints its version on stderr: "nginx version: nginx/1.22.1".
  return /nginx\/(\S+)/.exec(spawnSync(NGINX, ['-v']).stderr.toString())?.[1] ?? 'unknown';
}

export const peersSection: Section = {
  heading: 'Against the peers: ipx, Next.js, nginx image_filter',
  question: 'Against the peers',
  about:
    'raw sharp, imgpipe (POST url, delivery miss/hit), ipx, Next.js image optimizer (miss/hit), nginx image_filter on one resize by URL, interleaved; installs the peers into bench/peers/ when missing (~9 min; --quick ~1 min)',
  run: async (ctx) =>
    measurePeers(await ctx.base(), ctx.limits, peersOptions(ctx.quick, ctx.budget), ctx.startLines),
};
