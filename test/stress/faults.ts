// The fault phases of the stress run: SIGKILL mid-traffic then restart, and a full disk under the SQLite file.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { PhaseResult } from './phases.ts';
import { ServerProcess } from './server-process.ts';
import { mixedTraffic, send, Tally } from './traffic.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens the SQLite file as a new process would after a crash (WAL recovery), runs integrity_check, reads usage. */
export function inspectStore(dataDir: string): { integrity: string; used: number; held: number } {
  const db = new Database(join(dataDir, 'imgpipe.db'));
  try {
    const integrity = String(db.pragma('integrity_check', { simple: true }));
    const used = (db.prepare('select coalesce(sum(used), 0) as n from usage').get() as { n: number }).n;
    const held = (db.prepare('select count(*) as n from quota_reservations').get() as { n: number }).n;
    return { integrity, used, held };
  } finally {
    db.close();
  }
}

/** Mixed traffic, SIGKILL at a point in its middle, restart on the same DATA_DIR. Returns the new server. */
export async function sigkill(server: ServerProcess, dataDir: string, tally: Tally) {
  let stop = false;
  const traffic = mixedTraffic(server.url, tally, 6, () => stop);
  await pause(3000 + Math.floor(Math.random() * 2000));
  await server.stop('SIGKILL');
  stop = true;
  await traffic;
  const afterKill = inspectStore(dataDir);
  const restarted = await ServerProcess.start(dataDir);
  const afterRestart = inspectStore(dataDir);
  const problems: string[] = [];
  if (afterKill.integrity !== 'ok') problems.push(`integrity_check after SIGKILL: ${afterKill.integrity}`);
  if (afterRestart.held !== 0) problems.push(`${afterRestart.held} reservations left after restart`);
  const result: PhaseResult = {
    name: 'SIGKILL and restart',
    summary: `killed with ${afterKill.held} units in flight; integrity_check ${afterKill.integrity}; after restart ${afterRestart.held} in flight, usage ${afterRestart.used}`,
    problems,
  };
  return { restarted, result, used: afterRestart.used, heldAtKill: afterKill.held };
}

/** Fills a 2 MiB tmpfs holding DATA_DIR, sends traffic, frees it, sends more. Needs root (mount); else skipped. */
export async function diskFull(baseDir: string): Promise<PhaseResult & { tally: Tally }> {
  const tally = new Tally();
  const mountPoint = join(baseDir, 'tmpfs');
  mkdirSync(mountPoint, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint], { stdio: 'ignore' });
  } catch {
    return {
      name: 'disk full',
      summary: 'skipped: mounting a tmpfs needs root (mount -t tmpfs)',
      problems: [],
      tally,
    };
  }
  const dataDir = join(mountPoint, 'data');
  const problems: string[] = [];
  let summary = '';
  try {
    const server = await ServerProcess.start(dataDir, { MAX_UPLOAD_BYTES: '100000' });
    for (let i = 0; i < 3; i++) await send(server.url, 'valid', tally);
    const filler = join(mountPoint, 'filler');
    const fd = openSync(filler, 'w');
    try {
      for (;;) writeSync(fd, Buffer.alloc(16 * 1024));
    } catch {
      // ENOSPC: the disk is full now.
    } finally {
      closeSync(fd);
    }
    const whileFull = new Tally();
    for (let i = 0; i < 40; i++) await send(server.url, i % 4 === 3 ? 'healthz' : 'valid', whileFull);
    rmSync(filler);
    const afterFree = new Tally();
    for (let i = 0; i < 5; i++) await send(server.url, 'valid', afterFree);
    const alive = server.alive();
    await server.stop();
    const store = inspectStore(dataDir);
    for (const t of [whileFull, afterFree]) {
      tally.requests += t.requests;
      tally.ok += t.ok;
      tally.status500 += t.status500;
      for (const [code, n] of t.byCode) tally.byCode.set(code, (tally.byCode.get(code) ?? 0) + n);
    }
    const codes = [...whileFull.byCode].map(([c, n]) => `${c} ${n}`).join(', ');
    summary = `while full: ${codes}; after freeing: ${afterFree.ok}/5 × 200; process alive: ${alive}; integrity_check ${store.integrity}; usage ${store.used} for ${tally.ok} × 200`;
    if (!alive) problems.push('the server died when the disk filled');
    if (store.integrity !== 'ok') problems.push(`integrity_check: ${store.integrity}`);
    if (afterFree.ok !== 5) problems.push('the server did not recover once space was freed');
    if (whileFull.status500 > 0) problems.push(`${whileFull.status500} × 500 while the disk was full`);
  } finally {
    execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
  }
  return { name: 'disk full', summary, problems, tally };
}
