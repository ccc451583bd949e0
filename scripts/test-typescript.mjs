// Loaded into every test file's process by scripts/run-tests.mjs (`--import`): runs the project's TypeScript (every
// import names its .ts file) with its types stripped by esbuild, each file's output kept on disk by its path, size
// and time (node_modules/.cache/imgpipe/test-typescript/). It does what tsx did here in a third less CPU per process
// (tsx also guesses extensions, reads tsconfig paths and hooks CommonJS, which the project does not need); what a
// test spawns still runs through tsx or the bundle, as a user's would.
import { register } from 'node:module';

// Stack traces name the .ts line (the output carries an inline source map).
process.setSourceMapsEnabled(true);
register('./test-typescript-hooks.mjs', import.meta.url);
