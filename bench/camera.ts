// owns: `npm run bench -- --only camera`: camera originals (12, 18, 24 and 40 MP JPEGs with EXIF) → 800 px wide JPEG,
// one request at a time, by upload and by URL, against raw sharp's own call in the same run: the service's CPU per
// image (its process tree, from /proc) over raw sharp's, rounds interleaved, with a second raw side as the A/A control.
import sharp from 'sharp';
import { readInputStructure } from '../src/pipeline/input-header.ts';
import { runsInProcess } from '../src/pipeline/in-process.ts';
import type { Operations } from '../src/pipeline/operations.ts';
import { median } from './compare.ts';
import { jpegOfSize, sizeForMegapixels } from './inputs.ts';
import {
  httpClient,
  prepareImageRequest,
  startJpegOrigin,
  type HttpClient,
  type PreparedRequest,
} from './load.ts';
import { fmt, table } from './report.ts';
import type { Section } from './section.ts';
import { startService } from './service.ts';
import { rawSharp, workload, type Workload } from './workloads.ts';

/** 12 MP: a phone's binned default; 18 and 24 MP: a current phone's or most cameras' default; 40 MP: the pixel cap. */
const MEGAPIXELS = [12, 18, 24, 40];
const OPERATIONS: Operations = {
  resize: { w: 800, fit: 'inside' },
  format: 'jpeg',
  quality: 80,
  strip: true,
};
/** The goals: the service's CPU per camera photo over raw sharp's. */
const GOAL = { upload: 1.25, url: 1.35 };

interface Camera {
  megapixels: number;
  workload: Workload;
  upload: PreparedRequest;
  url: PreparedRequest;
  /** CPU ms per image of each round, per side. */
  raw: number[];
  rawB: number[];
  byUpload: number[];
  byUrl: number[];
}

/** A camera-like original: the base scaled to the size, JPEG q90 4:2:0 with an EXIF block as a camera writes one. */
async function cameraJpeg(base: Buffer, megapixels: number): Promise<Buffer> {
  const { width, height } = sizeForMegapixels(megapixels);
  const plain = await jpegOfSize(base, width, height);
  return sharp(plain, { limitInputPixels: false })
    .withExif({
      IFD0: { Make: 'imgpipe bench', Model: `${megapixels} MP camera`, Software: 'bench/camera.ts' },
    })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** CPU ms per image of `n` jobs one after another; `cpuMs` reads the side's CPU so far. */
async function segment(n: number, cpuMs: () => number, job: () => Promise<unknown>): Promise<number> {
  const c0 = cpuMs();
  for (let i = 0; i < n; i++) await job();
  return (cpuMs() - c0) / n;
}

const ownCpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

async function post(client: HttpClient, request: PreparedRequest): Promise<void> {
  const status = await client.post(request);
  if (status !== '200') throw new Error(`camera: the service answered ${status}`);
}

const ratioOf = (side: number[], raw: number[]) => side.map((v, i) => v / (raw[i] as number));
const range = (values: number[]) => `${fmt.n(Math.min(...values), 2)}–${fmt.n(Math.max(...values), 2)}`;

function cameraTable(cameras: Camera[]): string {
  return table(
    [
      'Input',
      'JPEG bytes',
      'runs in',
      'CPU/img ms raw / upload / URL',
      '**upload/raw** (rounds)',
      '**URL/raw** (rounds)',
      'A/A: raw B/raw (rounds)',
    ],
    cameras.map((c) => {
      const { width, height } = c.workload.source;
      const structure = readInputStructure(c.workload.input, 'jpeg');
      const upload = ratioOf(c.byUpload, c.raw);
      const url = ratioOf(c.byUrl, c.raw);
      const aa = ratioOf(c.rawB, c.raw);
      return [
        `${c.megapixels} MP (${width}x${height})`,
        fmt.mb(c.workload.input.length),
        runsInProcess(structure, OPERATIONS) ? 'the main process' : 'a child',
        `${fmt.n(median(c.raw))} / ${fmt.n(median(c.byUpload))} / ${fmt.n(median(c.byUrl))}`,
        `**${fmt.n(median(upload), 2)}** (${range(upload)})`,
        `**${fmt.n(median(url), 2)}** (${range(url)})`,
        `${fmt.n(median(aa), 2)} (${range(aa)})`,
      ];
    }),
  );
}

function verdict(cameras: Camera[]): string {
  const missed = cameras.flatMap((c) => {
    const upload = median(ratioOf(c.byUpload, c.raw));
    const url = median(ratioOf(c.byUrl, c.raw));
    return [
      ...(upload > GOAL.upload ? [`${c.megapixels} MP upload ${fmt.n(upload, 2)}`] : []),
      ...(url > GOAL.url ? [`${c.megapixels} MP URL ${fmt.n(url, 2)}`] : []),
    ];
  });
  const spread = Math.max(...cameras.map((c) => Math.abs(median(ratioOf(c.rawB, c.raw)) - 1)));
  return (
    `Goal (upload ≤ ${GOAL.upload}× raw sharp's CPU, URL ≤ ${GOAL.url}×, medians of the rounds): ` +
    (missed.length === 0 ? 'holds on every size' : `missed: ${missed.join(', ')}`) +
    `. A/A control: the second raw side measured up to ${fmt.n(spread * 100, 1)} % from the first.`
  );
}

export const cameraSection: Section = {
  heading: 'Camera photos against raw sharp',
  question: 'Against raw sharp and the floor',
  about: '12, 18, 24, 40 MP JPEGs → 800 px JPEG by upload and URL, one at a time, against raw sharp (~4 min)',
  async run(ctx) {
    // 10 rounds of 10 images per side: a side's segment spends 0.5–2 s of CPU, so /proc's 10 ms ticks move a
    // round's ratio by 1–2 %, and the A/A control's median stays within about 5 % (3-image segments and 6 rounds:
    // 8–16 %).
    const rounds = ctx.quick ? 1 : 10;
    const perSegment = ctx.quick ? 1 : 10;
    const base = await ctx.base();
    const files = new Map<string, Buffer>();
    const origin = await startJpegOrigin(files);
    // The service as shipped (its default byte caps hold a 40 MP camera JPEG), one job slot: one request at a time.
    const service = await startService({
      ...ctx.serviceEnv,
      MAX_CONCURRENT_JOBS: '1',
      FETCH_ALLOW_CIDRS: '127.0.0.1/32',
    });
    const client = httpClient(service.origin, 1);
    try {
      const cameras: Camera[] = [];
      for (const megapixels of MEGAPIXELS) {
        const input = await cameraJpeg(base.data, megapixels);
        files.set(`/${megapixels}.jpg`, input);
        cameras.push({
          megapixels,
          workload: await workload(`${megapixels} MP`, `${megapixels} MP camera JPEG`, input, OPERATIONS),
          upload: prepareImageRequest(service.apiKey, input, OPERATIONS),
          url: {
            body: Buffer.from(
              JSON.stringify({ url: `${origin.url}/${megapixels}.jpg`, operations: OPERATIONS }),
            ),
            headers: { 'content-type': 'application/json', authorization: `Bearer ${service.apiKey}` },
          },
          raw: [],
          rawB: [],
          byUpload: [],
          byUrl: [],
        });
      }
      const raw = (c: Camera) => () => rawSharp(c.workload, ctx.limits);
      for (const c of cameras) {
        for (let i = 0; i < 2; i++) {
          await raw(c)();
          await post(client, c.upload);
          await post(client, c.url);
        }
      }
      for (let round = 0; round < rounds; round++) {
        console.error(`[camera] round ${round + 1}/${rounds}`);
        // Sizes inside a round, sides inside a size: a loaded moment falls on every side alike.
        for (const c of cameras) {
          c.raw.push(await segment(perSegment, ownCpuMs, raw(c)));
          c.byUpload.push(await segment(perSegment, service.cpuMs, () => post(client, c.upload)));
          c.rawB.push(await segment(perSegment, ownCpuMs, raw(c)));
          c.byUrl.push(await segment(perSegment, service.cpuMs, () => post(client, c.url)));
        }
      }
      return {
        method: [
          `Input: ${base.description} scaled to each size (upscaled at 40 MP), JPEG q90 4:2:0 with an EXIF block;` +
            ` → ${JSON.stringify(OPERATIONS)}`,
          `One request at a time (MAX_CONCURRENT_JOBS=1, the default byte caps); ${rounds} rounds, each size in turn:` +
            ` raw sharp → upload → raw sharp B (the A/A control) → URL (a loopback origin, kept connection),` +
            ` ${perSegment} images per side; each ratio is the median of the rounds' ratios (their range in brackets)`,
          "CPU: the service's process tree from /proc (its children included); raw sharp's own call from" +
            " process.cpuUsage() of the bench process (bench/workloads.ts rawSharp: the service's decoder options and steps)",
        ],
        body: `${cameraTable(cameras)}\n\n${verdict(cameras)}`,
      };
    } finally {
      await client.close();
      await service.stop();
      await origin.close();
    }
  },
};
