# syntax=docker/dockerfile:1
# The Animal Store API as a production image: compiled JavaScript, production dependencies
# only, a non-root user, and a health check on /healthz.
#   docker build -t animal-store-api .
#   docker run -e DATABASE_URL=postgres://… -e API_KEYS=… -p 3000:3000 animal-store-api

FROM node:20-bookworm-slim AS build
WORKDIR /app
# The patches are applied by the install (postinstall: patch-package), so they come with it.
COPY package.json package-lock.json ./
COPY patches ./patches
# `npm ci` refuses a lockfile made on one platform; `npm install` keeps it as it is.
RUN npm install --no-audit --no-fund
COPY tsconfig.json ./
COPY spec ./spec
COPY generated ./generated
COPY src ./src
# npm run build also compiles the spec diff (scripts/spec-diff), which CI runs from dist/.
COPY scripts ./scripts
RUN npm run build

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm install --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# Production refuses to start while an operation is still a generated stub (README: Stubs in production).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 ALLOW_STUBS=false
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The spec, with any files it refers to: the server bundles it at start-up.
COPY spec ./spec
COPY src/store/migrations ./src/store/migrations
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/src/main.js"]
