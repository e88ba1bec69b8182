# The service as a container image: Node 20, dependencies installed with the lockfile,
# run as the unprivileged `node` user. Build: docker build -t agent-gateway .
# (No container engine runs on the project's own machines: this file is kept to the same
# commands as the README, `npm ci` and `npm start`, and checked by test/operations.)

FROM node:20-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# The workspaces (the contract package, the Stripe emulator, the client, the dashboard): npm ci needs their manifests.
COPY packages/contract/package.json ./packages/contract/
COPY packages/stripe-emulator/package.json ./packages/stripe-emulator/
COPY packages/x402-facilitator/package.json ./packages/x402-facilitator/
COPY clients/typescript/package.json ./clients/typescript/
COPY web/package.json ./web/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# The owner dashboard (with the dev dependencies: Vite, React) and the service (one module,
# dist/service.mjs) are built in a stage of their own; the image keeps only what they made:
# web/dist, which the service serves at DASHBOARD_PATH, and dist, which `npm start` runs.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY packages/contract/package.json ./packages/contract/
COPY packages/stripe-emulator/package.json ./packages/stripe-emulator/
COPY packages/x402-facilitator/package.json ./packages/x402-facilitator/
COPY clients/typescript/package.json ./clients/typescript/
COPY web/package.json ./web/
RUN npm ci --no-audit --no-fund
COPY scripts ./scripts
COPY src ./src
COPY packages ./packages
COPY web ./web
RUN npm run build:web
RUN npm run build:service

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PORT=8080 \
    DATA_DIR=/app/.data
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /app/web/dist ./web/dist
COPY --from=build /app/dist ./dist
COPY package.json package-lock.json ./
COPY scripts/build-dashboard.mjs scripts/build-service.mjs ./scripts/
COPY data ./data
# Only the embedded database (no DATABASE_URL) writes here.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# SIGTERM drains requests in flight (SHUTDOWN_GRACE_MS); run with an init (compose: init: true).
CMD ["npm", "start"]
