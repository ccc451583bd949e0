// Loaded into the service under test (node --import) only when IMGPIPE_BENCH_PLANTED_SLOWDOWN is set
// (bench/service.ts): after each request, the service spins for that fraction of the request's time, on its own CPU.
// It exists to show that `npm run bench -- --budget` fails on a slowdown; nothing else loads it.
import { subscribe } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';

const fraction = Number(process.env.IMGPIPE_BENCH_PLANTED_SLOWDOWN ?? 0);
const started = new WeakMap();

if (fraction > 0) {
  subscribe('http.server.request.start', ({ request }) => started.set(request, performance.now()));
  subscribe('http.server.response.finish', ({ request }) => {
    const t0 = started.get(request);
    if (t0 === undefined) return;
    const end = performance.now() + (performance.now() - t0) * fraction;
    while (performance.now() < end) {
      // burn the service's CPU
    }
  });
}
