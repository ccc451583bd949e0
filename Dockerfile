# imgpipe: built in one stage (the full install: esbuild bundles src/ into dist/), shipped in another with the bundle
# and the production dependencies only: no compiler and no TypeScript source in the image. Runs as `node`.
FROM node:20-slim AS build

WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
# npm ci also builds dist/ ("prepare": bin/build.js), so the sources come first; prune then drops the dev dependencies.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

FROM node:20-slim

WORKDIR /app
# Read by libuv and glibc before the server's code runs, so set here (bin/serve-environment.js; README, "Starting the
# server"): a thread per job slot plus two, and a malloc arena per two job slots, for the defaults (raise both with
# MAX_CONCURRENT_JOBS); V8's young generation at 1 MB per semi-space.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    UV_THREADPOOL_SIZE=4 \
    GLIBC_TUNABLES=glibc.malloc.arena_max=1 \
    NODE_OPTIONS=--max-semi-space-size=1

COPY package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
# Read at run time: the pages' scripts and styles, the runnable examples /docs shows as they are in the repository,
# and the guides it serves as pages (/docs/<guide>: README.md and docs/).
COPY src/http/static ./src/http/static
COPY examples ./examples
COPY README.md ./
COPY docs ./docs

# SQLite file and dev mail outbox when DATABASE_URL is not PostgreSQL.
RUN mkdir -p /data && chown node:node /data
VOLUME /data

USER node
EXPOSE 3000

HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

CMD ["node", "bin/imgpipe.js", "serve"]
