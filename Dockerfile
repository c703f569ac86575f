# syntax=docker/dockerfile:1
# Users service image: `docker build -t users-service .`
# Checked by test/deployment/dockerfile.spec.ts (paths, ports, user, health check, command, base image, labels).
# Labels that only CI knows: `--build-arg REVISION=$(git rev-parse HEAD) --build-arg VERSION=1.0.1`.

# Node 24, the active LTS (Node 20 reached end of life on 2026-04-30; nestjs-pino and file-type
# require 22+). Pinned by digest so a rebuild gets the same base: the digest public builds pinned
# for node:24-bookworm-slim (Node 24.18.0) in July 2026. To move it, take the current one from
# `docker buildx imagetools inspect node:24-bookworm-slim` (or let Renovate/Dependabot do it).
ARG NODE_TAG=24-bookworm-slim
ARG NODE_DIGEST=sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# ---- build: all dependencies, TypeScript -> dist/ -------------------------------------------------
FROM node:${NODE_TAG}@${NODE_DIGEST} AS builder
WORKDIR /app
# Dependencies first, so this layer is reused while only the sources change. No install scripts:
# the build (tsc through the Nest CLI) needs none of them.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
# Emits dist/src/** and dist/migrations/** (the migrations are imported as classes, not globbed).
RUN npm run build

# ---- relay: the change feed relay (scripts/relay.mjs, docs/events.md), an image of its own --------
# `docker build --target relay -t users-service-relay .`: plain ES modules, nothing to build. The
# only image with the NATS packages; it serves /health and /metrics on RELAY_METRICS_PORT.
FROM node:${NODE_TAG}@${NODE_DIGEST} AS relay
ENV NODE_ENV=production \
    NPM_CONFIG_CACHE=/tmp/.npm \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts \
    && npm cache clean --force \
    && rm -rf /tmp/.npm
COPY proto ./proto
COPY scripts/relay.mjs ./scripts/relay.mjs
COPY scripts/lib/feed-relay.mjs scripts/lib/grpc-client.mjs scripts/lib/relay-lock.mjs scripts/lib/relay-status.mjs ./scripts/lib/
USER 1000
EXPOSE 9465
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.RELAY_METRICS_PORT || 9465) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "scripts/relay.mjs"]

# ---- runtime: production dependencies and the compiled service only ------------------------------
FROM node:${NODE_TAG}@${NODE_DIGEST} AS runtime
ARG NODE_TAG
ARG NODE_DIGEST
ARG VERSION=1.0.0
ARG REVISION=unknown
# OCI annotations: what registries, scanners and `docker inspect` show about the image.
LABEL org.opencontainers.image.title="users-service" \
      org.opencontainers.image.description="Users REST and gRPC service on NestJS and PostgreSQL" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="docker.io/library/node:${NODE_TAG}" \
      org.opencontainers.image.base.digest="${NODE_DIGEST}"
ENV NODE_ENV=production \
    NPM_CONFIG_CACHE=/tmp/.npm \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
WORKDIR /app
# --omit=optional leaves out embedded-postgres and async-exit-hook (the development database): the
# service refuses to start without DATABASE_URL when NODE_ENV=production anyway. No production
# dependency needs an install script. The NATS packages are the relay's (its own target above):
# the service never loads them.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts \
    && rm -rf node_modules/@nats-io \
    && npm cache clean --force \
    && rm -rf /tmp/.npm
COPY --from=builder /app/dist ./dist
# Read at run time: proto/ (found by walking up from dist/src to the directory holding
# package.json and proto/), public/ (static files); `npm run migration:run` calls
# scripts/build-if-needed.mjs, which builds nothing when src/ is absent, as it is here.
COPY proto ./proto
COPY public ./public
COPY scripts/build-if-needed.mjs ./scripts/build-if-needed.mjs
# Files stay owned by root and read-only for the service. Numeric, so Kubernetes' runAsNonRoot can
# verify it (uid 1000 is the image's `node` user).
USER 1000
# HTTP, gRPC and metrics (PORT, GRPC_PORT and METRICS_PORT defaults).
EXPOSE 3000 5000 9464
# Liveness only: /health never waits on the database. Node has a global fetch (no curl here).
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself (drain, then close; see src/main.ts).
# telemetry.js runs first: tracing must start before the modules it instruments load.
CMD ["node", "--import", "./dist/src/telemetry.js", "dist/src/main.js"]
