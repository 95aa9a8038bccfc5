# smarter-worker and smarter-beat in one image. Build: docker build -t smarter-worker .
# Stage 1 compiles with the dev dependencies; stage 2 holds only the production dependencies and dist/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY lib lib
COPY tasks tasks
COPY beat beat
COPY bin bin
COPY bench bench
COPY build build
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
# tini as PID 1 forwards SIGTERM to the worker (warm shutdown) and reaps zombies.
RUN apt-get update && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    SMARTER_WORKER_HTTP_PORT=8080 \
    SMARTER_BEAT_HTTP_PORT=8080 \
    SMARTER_BEAT_SCHEDULE_FILE=/data/celerybeat-schedule.json
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist/lib dist/lib
COPY --from=build /app/dist/tasks dist/tasks
COPY --from=build /app/dist/beat dist/beat
COPY --from=build /app/dist/bin dist/bin
# `celery` on the PATH: Smarter's own commands and probes (`celery -A smarter.workers.celery.app worker …`,
# `celery … inspect ping`, `pgrep -f 'celery.*worker'`) run unchanged against this image.
RUN printf '#!/bin/sh\nexec node /app/dist/bin/celery.js "$@"\n' > /usr/local/bin/celery \
  && chmod 755 /usr/local/bin/celery \
  && mkdir -p /data && chown node:node /data
# The image's "node" user (uid 1000); the root filesystem can be mounted read-only (state goes to /data).
USER 1000:1000
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# smarter-worker; the Beat container runs: node dist/beat/main.js (or Smarter's `celery -A … beat`)
CMD ["node", "dist/tasks/main.js"]
