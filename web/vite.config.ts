import react from "@vitejs/plugin-react"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

/**
 * The owner dashboard: built into web/dist, which the service serves at DASHBOARD_PATH.
 * Assets are addressed relative to the page's `<base>` (the service writes it), so one
 * build works under any DASHBOARD_PATH. `npx vite --config web/vite.config.ts` serves it
 * for development, sending API calls to a service on SERVICE_URL (default localhost:8080).
 */
const service = process.env["SERVICE_URL"] ?? "http://localhost:8080"

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  plugins: [react()],
  // The contract package's subpaths are the service's sources (packages/contract builds them).
  resolve: {
    alias: [{
      find: /^@agent-gateway\/contract\/(.*)\.js$/,
      replacement: `${fileURLToPath(new URL("../src", import.meta.url))}/$1.ts`
    }]
  },
  logLevel: "warn",
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1200, reportCompressedSize: true },
  server: {
    proxy: Object.fromEntries(["/v1", "/auth", "/admin", "/docs"].map((path) => [path, service]))
  }
})
