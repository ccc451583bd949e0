# imgpipe: production install (no dev dependencies), run as the unprivileged `node` user.
FROM node:20-slim

WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data

COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
# /docs shows the runnable examples as they are in the repository.
COPY examples ./examples
# npm ci also builds the bundle the server starts from ("prepare": bin/build.js), so the sources come first.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# SQLite file and dev mail outbox when DATABASE_URL is not PostgreSQL.
RUN mkdir -p /data && chown node:node /data
VOLUME /data

USER node
EXPOSE 3000

HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

CMD ["node", "--initial-old-space-size=128", "bin/imgpipe.js", "serve"]
