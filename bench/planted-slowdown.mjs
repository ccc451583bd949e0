// Loaded into the service under test (node --import) only when IMGPIPE_BENCH_PLANTED_SLOWDOWN is set
// (bench/service.ts): before each response ends, the service spins for that fraction of the request's time so far, on
// its own CPU and inside the request's time. It exists to show that `npm run bench -- --budget` fails on a slowdown;
// nothing else loads it.
import { subscribe } from 'node:diagnostics_channel';
import { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

const fraction = Number(process.env.IMGPIPE_BENCH_PLANTED_SLOWDOWN ?? 0);
const started = new WeakMap();

if (fraction > 0) {
  subscribe('http.server.request.start', ({ request }) => started.set(request, performance.now()));
  const end = ServerResponse.prototype.end;
  ServerResponse.prototype.end = function plantedEnd(...args) {
    const t0 = started.get(this.req);
    if (t0 !== undefined) {
      started.delete(this.req);
      const until = performance.now() + (performance.now() - t0) * fraction;
      while (performance.now() < until) {
        // burn the service's CPU
      }
    }
    return end.apply(this, args);
  };
}
