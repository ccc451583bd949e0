// The Astro site of test/frameworks/contracts.test.ts: every <Image> through @imgpipe/client's image service.
import { defineConfig } from 'astro/config';

export default defineConfig({
  // Inside node_modules: git, eslint and prettier already ignore them.
  outDir: './node_modules/.astro-build',
  cacheDir: './node_modules/.astro-cache',
  image: {
    service: {
      entrypoint: '../../../clients/js/frameworks/astro.js',
      config: { baseUrl: process.env.IMGPIPE_URL, accountId: process.env.IMGPIPE_ACCOUNT },
    },
  },
});
