// owns: counting instructions with callgrind (bench/floor-callgrind.ts, bench/store-callgrind.ts,
// bench/jpeg-guard-callgrind.ts): a child's measured window, and self instructions per ELF object of a dump.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * Self instructions per ELF object of one callgrind dump. `ob=` sets the object of the lines that follow; `cob=`
 * only names an id (compressed names are defined wherever they first appear); the cost line after a `calls=` line
 * is inclusive of the callee, so it is skipped.
 */
export function instructionsByObject(path: string): Map<string, number> {
  const names = new Map<string, string>();
  const byObject = new Map<string, number>();
  let object = '?';
  let skipNext = false;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const ob = /^c?ob=(?:\((\d+)\))?\s*(.*)$/.exec(line);
    if (ob) {
      const [, id, name] = ob;
      if (id !== undefined && name) names.set(id, name);
      if (line.startsWith('ob=')) object = (id !== undefined ? names.get(id) : name) ?? '?';
      continue;
    }
    if (line.startsWith('calls=')) skipNext = true;
    else if (/^[0-9+\-*]/.test(line)) {
      if (skipNext) skipNext = false;
      else byObject.set(object, (byObject.get(object) ?? 0) + Number(line.split(' ')[1] ?? 0));
    }
  }
  return byObject;
}

/**
 * Runs `script --child …childArgs` under callgrind with instrumentation off, and counts only the child's measured
 * window: the child writes a line when warmed up, waits for one on stdin, does the counted work, writes a line, and
 * exits on the next line it reads. Returns the window's self instructions per ELF object.
 */
export async function countChildWindow(
  script: string,
  childArgs: string[],
  nodeFlags: string[] = [],
): Promise<Map<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpipe-callgrind-'));
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${join(dir, 'cg.out')}`,
      process.execPath,
      ...nodeFlags,
      '--import',
      'tsx',
      script,
      '--child',
      ...childArgs,
    ],
    { stdio: ['pipe', 'pipe', 'ignore'] },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const control = (...args: string[]) =>
    execFileSync('callgrind_control', [...args, String(child.pid)], { stdio: 'ignore' });
  await lines.next();
  control('-i', 'on');
  control('-z');
  child.stdin.write('go\n');
  await lines.next();
  control('-d');
  child.stdin.end('end\n');
  await once(child, 'exit');
  const dump = readdirSync(dir).find((f) => /\.\d+$/.test(f));
  if (!dump) throw new Error('callgrind wrote no dump');
  return instructionsByObject(join(dir, dump));
}
