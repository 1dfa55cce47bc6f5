# The Target Health worker image (docker-compose.yml builds it). Two stages: compile with the dev
# dependencies, run with production dependencies only.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The crawler package (an npm workspace the server depends on): npm ci links it from here.
COPY packages/crawler/package.json ./packages/crawler/
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages/crawler/package.json ./packages/crawler/
COPY --from=build /app/packages/crawler/dist ./packages/crawler/dist
COPY --from=build /app/dist ./dist
COPY --from=build /app/server/db/migrations ./server/db/migrations
COPY --from=build /app/client/bin ./client/bin
USER node
CMD ["node", "dist/worker/main.js"]
