// One `imgpipe serve` per SQLite file: a lock file beside the database (its real path) names the serving process.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The SQLite file of a `sqlite:PATH` database URL, or undefined for PostgreSQL and in-memory databases. */
export function sqliteFileOf(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const path = databaseUrl.slice('sqlite:'.length);
  return path === ':memory:' ? undefined : path;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** When a process started (clock ticks since boot, /proc/<pid>/stat field 22), or undefined without /proc. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; the fields after its last ')' are fixed.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** What a lock file says: this process and when it started, so a later process reusing the pid is not taken for it. */
function lockText(): string {
  return JSON.stringify({ pid: process.pid, started: processStartTime(process.pid) });
}

/**
 * The pid of a live holder of the lock, or undefined when the lock is stale: its process is gone, or the pid now
 * belongs to a process that started at another time (a reused pid). A lock of an older version holds only a pid:
 * it counts while that pid runs an imgpipe command line.
 */
function liveHolder(text: string): number | undefined {
  let holder: { pid?: unknown; started?: unknown };
  try {
    const parsed: unknown = JSON.parse(text);
    holder = typeof parsed === 'number' ? { pid: parsed } : (parsed as typeof holder);
  } catch {
    return undefined;
  }
  const pid = holder.pid;
  if (
    typeof pid !== 'number' ||
    !Number.isInteger(pid) ||
    pid <= 0 ||
    pid === process.pid ||
    !isRunning(pid)
  ) {
    return undefined;
  }
  if (typeof holder.started === 'string') {
    const started = processStartTime(pid);
    return started === undefined || started === holder.started ? pid : undefined;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('imgpipe') ? pid : undefined;
  } catch {
    return pid;
  }
}

/** The database file with every symlink resolved (of its folder, when it does not exist yet): one file, one lock. */
function realPathOf(file: string): string {
  if (existsSync(file)) return realpathSync(file);
  return join(realpathSync(dirname(file)), basename(file));
}

const HOLDER_EXIT_WAIT_MS = 2000;

export class SqliteInUseError extends Error {
  override name = 'SqliteInUseError';
}

/**
 * Takes `<real path of file>.serve.lock` for this process, or throws SqliteInUseError naming the file when a
 * running process holds it. A lock left by a killed process (its pid gone or reused) is taken over. Returns the
 * release function.
 */
export async function lockSqliteForServe(file: string): Promise<() => void> {
  mkdirSync(dirname(file), { recursive: true });
  const lockPath = `${realPathOf(file)}.serve.lock`;
  // A holder that was just killed may take a moment to be gone (a restart right after a kill).
  const giveUpAt = Date.now() + HOLDER_EXIT_WAIT_MS;
  for (;;) {
    try {
      writeFileSync(lockPath, lockText(), { flag: 'wx' });
      return () => rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = liveHolder(readFileSync(lockPath, 'utf8').trim());
      if (holder !== undefined) {
        if (Date.now() < giveUpAt) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        throw new SqliteInUseError(
          `${file} is already served by process ${holder}; only one imgpipe serve may use a SQLite file (use PostgreSQL for several instances)`,
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
}
