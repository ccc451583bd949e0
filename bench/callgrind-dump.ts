// owns: reading a callgrind dump (bench/floor-callgrind.ts, bench/store-callgrind.ts): self instructions per ELF object.
import { readFileSync } from 'node:fs';

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
