// The smallest Next.js app whose image optimizer (/_next/image) the bench measures.
export default {
  // Inside node_modules: git, eslint and prettier already ignore it, and a fresh `npm ci` drops a stale build.
  distDir: 'node_modules/.next-build',
  // This folder is the app's root, not the repository's (Next would guess it from the outer lockfile).
  outputFileTracingRoot: import.meta.dirname,
  images: {
    // The bench's origin is on 127.0.0.1, which Next 16 refuses unless told.
    dangerouslyAllowLocalIP: true,
    remotePatterns: [{ protocol: 'http', hostname: '127.0.0.1' }],
    // Next 16 answers only the listed widths and qualities: the bench's 800 and 320 px at q80.
    deviceSizes: [320, 800],
    imageSizes: [],
    qualities: [80],
  },
};
