# The Animal Store API as a production image: compiled JavaScript, production dependencies
# only, a non-root user, and a health check on /healthz.
#   docker build -t animal-store-api .
#   docker run -e DATABASE_URL=postgres://… -e API_KEYS=… -p 3000:3000 animal-store-api
# Built by Docker's classic builder or BuildKit from local base images alone: there is no
# `# syntax=` line, for which BuildKit would fetch a frontend from a registry.

# The Node.js release the image runs and CI runs the whole suite on (docs/operations.md,
# Runtime). Named here only: .ci/run and the tests read it from this line.
ARG NODE_VERSION=24.21.0

# The production dependencies first: Docker's classic builder builds every stage before the one
# --target names, so a build of this stage alone (the image test's fresh install) is this stage alone.
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
# The patches are applied by the install (postinstall: patch-package), so they come with it;
# .npmrc makes an install script that package.json's allowScripts does not name fail the install.
COPY package.json package-lock.json .npmrc ./
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY spec ./spec
COPY generated ./generated
COPY src ./src
# The service alone: the spec diff (scripts/spec-diff) is a project of its own, built where CI runs it.
RUN npm run build

# What runs: Debian, the node binary and the server. No npm, npx, corepack or yarn (build
# tools, and what an image scan would flag), no dev dependency, test or TypeScript source.
FROM debian:bookworm-slim
COPY --from=deps /usr/local/bin/node /usr/local/bin/node
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --no-create-home --shell /usr/sbin/nologin node
# Production refuses to start while an operation is still a generated stub (README: Stubs in production).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 ALLOW_STUBS=false
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/generated ./dist/generated
COPY package.json ./
# The spec, with any files it refers to: the server bundles it at start-up (.dockerignore
# leaves out what it does not read: released specs, the changelog, lint settings).
COPY spec ./spec
COPY src/store/database/migrations ./src/store/database/migrations
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/src/main.js"]
