// Every process a test spawns is registered here as soon as it exists and killed when the test process exits,
// so a failing or stuck test can never leave a server running that keeps the suite waiting.
import type { ChildProcess } from 'node:child_process';

const alive = new Set<ChildProcess>();
let hooked = false;

export function killOnExit<T extends ChildProcess>(child: T): T {
  alive.add(child);
  child.once('exit', () => alive.delete(child));
  if (!hooked) {
    hooked = true;
    // 'exit' handlers run synchronously, also on the runner's forced exit: kill() is synchronous too.
    const killAll = () => {
      for (const c of alive) c.kill('SIGKILL');
    };
    process.once('exit', killAll);
    // The runner stops a file that outlives its backstop timeout with a signal, which skips 'exit' handlers.
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        killAll();
        process.exit(1);
      });
    }
  }
  return child;
}
