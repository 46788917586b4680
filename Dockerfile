# Quarry in a container: Bun runtime, non-root user, data on a volume, healthcheck on /api/health/ready.
#   docker build -t quarry .
#   docker run -p 8080:8080 -v quarry-data:/data -e QUARRY_ADMIN_PASSWORD=change-me-now quarry
FROM oven/bun:1.4.5-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only. --omit=peer as well: typescript is a peer of @elysiajs/openapi (only needed to turn
# type files into docs, which Quarry does not do) and @types/bun an optional one of elysia; with them, 44 MB of
# compiler and type packages rode along (node_modules 79 MB; 35 MB without). The image brings its own Bun; the npm
# copy of it is only for hosts without one.
RUN bun install --production --omit=peer \
 && rm -rf node_modules/bun node_modules/@oven
# The server as one bundle compiled to bytecode (npm run build:server): it starts in about half the CPU time of
# `bun run server/main.ts`, which reads and compiles some 390 source files first (bench/README.md, cold start).
COPY tsconfig.json bunfig.toml ./
COPY engine ./engine
COPY server ./server
COPY plugins ./plugins
COPY vendor ./vendor
# The web console (web/src → web/dist), served at / (plugins/console finds it beside dist/server)
COPY web ./web
RUN bun web/build.ts
# The matching workers' program (server/search/match-worker.ts, with the engine and re2js) is bundled by a macro
# while this builds, and inlined as text: the bundle needs no worker file beside it. protobufjs stays out: see
# server/search/match-worker-bundle.ts.
RUN bun build --target=bun --bytecode --format=cjs --external protobufjs/minimal server/main.ts --outdir dist/server

FROM oven/bun:1.4.5-slim
WORKDIR /app
ENV NODE_ENV=production \
    QUARRY_LISTEN=0.0.0.0:8080 \
    QUARRY_DATA_DIR=/data
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/dist ./dist
COPY --from=deps /app/web/dist ./web/dist
COPY package.json tsconfig.json bunfig.toml ./
COPY engine ./engine
COPY server ./server
COPY plugins ./plugins
COPY cli ./cli
# the API reference page's script (GET /api/docs/scalar-VERSION.js): served from this server, no CDN needed
COPY vendor ./vendor
# The licence (Apache-2.0) and the notices of what is bundled with it (the vendored Scalar bundle's MIT licence).
COPY LICENSE NOTICE ./
# `quarry` (the CLI: `docker exec CONTAINER quarry ...`) on PATH, run by the image's Bun, talking to this container's
# own server (the address of QUARRY_LISTEN) unless --server or QUARRY_URL says otherwise: deploy/container-cli.ts.
COPY deploy/container-cli.ts ./deploy/
# /data is made as the server makes a data directory (0700, owned by the user that runs it): a named volume mounted
# there starts as a copy of it, so a fresh container has nothing to tighten and logs no warning about it.
RUN mkdir -p /data && chown bun:bun /data && chmod 0700 /data \
 && printf '#!/bin/sh\nexec bun /app/deploy/container-cli.ts "$@"\n' > /usr/local/bin/quarry \
 && chmod 0755 /usr/local/bin/quarry
USER bun
VOLUME ["/data"]
EXPOSE 8080
# Readiness (store, migrations, blob store) on the port QUARRY_LISTEN configures, whatever it is set to at run time.
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["bun", "run", "server/http/healthcheck.ts"]
STOPSIGNAL SIGTERM
CMD ["bun", "dist/server/main.js"]
