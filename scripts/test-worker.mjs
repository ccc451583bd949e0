// A test process that runs many test files, one after another, for scripts/run-tests.mjs: importing the service's
// modules costs a file's own process most of a second of CPU, paid here once per process. The runner sends a file
// over IPC; the file runs as a suite named by its path, its results go to the file the runner named for it
// (test-results-reporter.mjs), and once its last result is written its report goes back to the runner.
//
// A file ends its process's run only as its own process would end: by exiting, by the runner's backstop, or by
// leaving nothing to wait on before its tests are done (a top-level await that never settles), after which no later
// suite could run either. The runner then starts a new process for the files left.
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';
import { beginFile } from './test-results-reporter.mjs';

let running = false;

process.on('message', ({ file, bundle, results }) => {
  running = true;
  // While a file runs, the channel does not keep the process alive: what the file's own process would have waited
  // on does.
  process.channel.unref();
  // The suite's own registration is not one of the file's tests.
  process.env.IMGPIPE_TEST_RESULTS = '';
  describe(file, async () => {
    beginFile(results, (report) => {
      running = false;
      process.channel.ref();
      process.send({ report });
    });
    await import(pathToFileURL(bundle).href);
  });
});

process.on('beforeExit', () => {
  // A file whose tests can no longer progress: its own process would have ended here, so this one does.
  if (running) process.exit(0);
});

// No file left: anything the files left open (a server, a timer) must not keep the process.
process.on('disconnect', () => process.exit(0));
