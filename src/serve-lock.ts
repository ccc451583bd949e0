// One `imgpipe serve` per SQLite file: a lock file beside the database names the serving process.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

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

const HOLDER_EXIT_WAIT_MS = 2000;

export class SqliteInUseError extends Error {
  override name = 'SqliteInUseError';
}

/**
 * Takes `<file>.serve.lock` for this process, or throws SqliteInUseError naming the file when a running process
 * holds it. A lock left by a killed process (its pid no longer runs) is taken over. Returns the release function.
 */
export async function lockSqliteForServe(file: string): Promise<() => void> {
  const lockPath = `${file}.serve.lock`;
  mkdirSync(dirname(file), { recursive: true });
  // A holder that was just killed may take a moment to be gone (a restart right after a kill).
  const giveUpAt = Date.now() + HOLDER_EXIT_WAIT_MS;
  for (;;) {
    try {
      writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return () => rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isRunning(holder)) {
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
