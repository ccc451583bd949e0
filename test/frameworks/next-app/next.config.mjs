// The Next.js app of test/frameworks/next-loader.test.ts: every <Image> through @imgpipe/client's loaderFile.
import { fileURLToPath } from 'node:url';

const REPOSITORY = fileURLToPath(new URL('../../..', import.meta.url));

export default {
  // Inside node_modules: git, eslint and prettier already ignore it, and a fresh `npm ci` drops a stale build.
  distDir: 'node_modules/.next-build',
  // @imgpipe/client is linked from clients/js, outside this folder: the build's root is the repository's.
  outputFileTracingRoot: REPOSITORY,
  turbopack: { root: REPOSITORY },
  images: {
    loader: 'custom',
    loaderFile: './node_modules/@imgpipe/client/frameworks/next.js',
  },
};
