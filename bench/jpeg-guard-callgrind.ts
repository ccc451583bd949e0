// owns: `node --import tsx bench/jpeg-guard-callgrind.ts [W1] [N]`: instructions per request of what the service reads
// from a JPEG upload's bytes before sharp sees it (inspectInput's walk of its structure with the scan limit's check, and the allow-list's
// decision), on a
// bench workload's input, in-process under valgrind's callgrind: N requests after 200 of warm-up (issue 28). V8
// compiles synchronously here: under valgrind its background compiler lags so far behind that the warm-up would
// still run the unoptimized loop.
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { runsInProcess } from '../src/pipeline/in-process.ts';
import { inspectInput } from '../src/pipeline/process.ts';
import { loadBaseImage } from './inputs.ts';
import { buildWorkloads } from './workloads.ts';
import { countChildWindow } from './callgrind-dump.ts';

async function requests(workloadId: string, count: number): Promise<void> {
  const workload = (await buildWorkloads(await loadBaseImage(false))).find((w) => w.id === workloadId);
  if (!workload) throw new Error(`no workload ${workloadId}`);
  const { input, operations } = workload;
  const limits = { maxInputPixels: 40_000_000, maxAnimationFrames: 300 };
  let kept = 0;
  const request = () => {
    if (runsInProcess(inspectInput(input, operations, limits), operations)) kept++;
  };
  for (let i = 0; i < 200; i++) request();
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write('warm\n');
  await lines.next();
  for (let i = 0; i < count; i++) request();
  process.stdout.write('done\n');
  await lines.next();
  if (kept !== 200 + count)
    throw new Error(`${workloadId}: ${kept} of ${200 + count} requests kept in-process`);
}

async function run(workloadId: string, count: number): Promise<Map<string, number>> {
  return countChildWindow(
    import.meta.filename,
    [workloadId, String(count)],
    ['--no-concurrent-recompilation', '--no-concurrent-osr'],
  );
}

if (process.argv[2] === '--child') await requests(process.argv[3] ?? 'W1', Number(process.argv[4]));
else {
  const workloadId = process.argv[2] ?? 'W1';
  const n = Number(process.argv[3] ?? 20);
  const counted = await run(workloadId, n);
  const objects = [...counted.keys()].sort((a, b) => (counted.get(b) ?? 0) - (counted.get(a) ?? 0));
  const per = (object: string) => (counted.get(object) ?? 0) / n;
  const total = objects.reduce((sum, o) => sum + per(o), 0);
  console.log(
    `${workloadId}: JPEG header and scan limit per request: ${(total / 1e6).toFixed(3)} M instructions (${n} after 200)`,
  );
  for (const object of objects) {
    if (per(object) >= 5e3)
      console.log(`  ${(per(object) / 1e6).toFixed(3).padStart(8)} M  ${basename(object)}`);
  }
}
