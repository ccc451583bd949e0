// The worst case of issue 14 item 4: a 40 MP input encoded to AVIF q100 with default limits. How long does the
// client wait, what does it get, and how long is the job slot held (read from the next request's answer)?
// Run: node --import tsx bench/avif-worst-case.ts
import sharp from 'sharp';
import { startService } from './service.ts';

const WIDTH = 6320;
const HEIGHT = 6320; // 39.9 MP, under MAX_INPUT_PIXELS = 40,000,000
const input = await sharp({
  create: {
    width: WIDTH,
    height: HEIGHT,
    channels: 3,
    background: '#000',
    noise: { type: 'gaussian', mean: 128, sigma: 20 },
  },
})
  .jpeg({ quality: 60 })
  .toBuffer();
const service = await startService({ MAX_CONCURRENT_JOBS: '1', MAX_UPLOAD_BYTES: String(64 * 1024 * 1024) });

async function post(body: FormData) {
  const started = performance.now();
  const res = await fetch(`${service.origin}/v1/image`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.apiKey}` },
    body,
  });
  const text = res.headers.get('content-type')?.startsWith('application/json') ? await res.text() : '(image)';
  await res.arrayBuffer().catch(() => undefined);
  return { status: res.status, ms: Math.round(performance.now() - started), text };
}

function form(bytes: Buffer, operations: object) {
  const f = new FormData();
  f.append('image', new Blob([new Uint8Array(bytes)]), 'big.jpg');
  f.append('operations', JSON.stringify(operations));
  return f;
}

const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#888' } })
  .jpeg()
  .toBuffer();
const cpuBefore = service.cpuMs();
const worst = post(form(input, { format: 'avif', quality: 100 }));
// Poll with a small request: the slot is free when it stops answering 503 busy.
const pollStarted = performance.now();
let slotFreeAfterMs = -1;
for (;;) {
  await new Promise((r) => setTimeout(r, 100));
  const res = await post(form(small, { format: 'webp' }));
  if (res.status === 200) {
    slotFreeAfterMs = Math.round(performance.now() - pollStarted);
    break;
  }
  if (performance.now() - pollStarted > 60_000) break;
}
const answer = await worst;
console.log(
  JSON.stringify({
    input: `${WIDTH}x${HEIGHT} noise JPEG, ${(input.length / 1e6).toFixed(1)} MB`,
    answer,
    slotFreeAfterMs,
    serverCpuMs: service.cpuMs() - cpuBefore,
  }),
);
await service.stop();
