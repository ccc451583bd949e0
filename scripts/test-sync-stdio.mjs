// Preloaded into every test file's process by scripts/run-tests.mjs, before anything is written. A file's process
// reports its results to the runner over its stdout, a pipe, and Node writes to a pipe asynchronously on POSIX:
// whatever the pipe could not take yet waits in the process, and --test-force-exit's process.exit() drops it, so a
// file's last results went uncounted (Node 24 exits as soon as the reporter has handed its output over). Blocking
// writes put each chunk into the pipe before write() returns, so the exit leaves nothing behind.
for (const stream of [process.stdout, process.stderr]) stream._handle?.setBlocking?.(true);
