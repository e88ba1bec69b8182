import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

/**
 * No container engine runs here, so the Dockerfile and compose.yaml are checked for what
 * can drift: the Node version, the commands (the README's), what an image without dev
 * dependencies needs to start, the files copied, and the variables being documented.
 */
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8")
const pkg = JSON.parse(read("package.json"))
const dockerfile = read("Dockerfile")
const compose = read("compose.yaml")
const readme = read("README.md")

describe("container files", () => {
  it("build on the Node line the project supports", () => {
    const engines: string = pkg.engines.node
    const major = /(\d+)/.exec(engines)![1]
    const bases = [...dockerfile.matchAll(/^FROM node:(\d+)/gm)].map((m) => m[1])
    expect(bases.length).toBeGreaterThanOrEqual(2)
    for (const base of bases) expect(base).toBe(major)
  })

  it("install with the lockfile and start with the README's command, as a non-root user", () => {
    expect(dockerfile).toMatch(/RUN npm ci --omit=dev/)
    expect(dockerfile).toMatch(/^USER node$/m)
    expect(dockerfile).toMatch(/^CMD \["npm", "start"\]$/m)
    expect(readme).toContain("npm start")
    // The image has no dev dependencies: `npm start` runs the service's build with Node alone,
    // and what builds it (where the sources are) is a dependency.
    expect(pkg.scripts.start).toBe("node --enable-source-maps dist/service.mjs")
    expect(Object.keys(pkg.dependencies)).toContain("esbuild")
    expect(Object.keys(pkg.devDependencies ?? {})).not.toContain("esbuild")
  })

  it("build the dashboard and the service in a stage with dev dependencies and keep only what they made", () => {
    expect(dockerfile).toMatch(/^FROM node:\d+\S* AS build$/m)
    expect(dockerfile).toMatch(/^RUN npm run build:web$/m)
    expect(dockerfile).toMatch(/^RUN npm run build:service$/m)
    expect(dockerfile).toMatch(/^COPY --from=build \/app\/web\/dist \.\/web\/dist$/m)
    expect(dockerfile).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m)
    // The image itself holds no sources.
    expect(dockerfile.slice(dockerfile.lastIndexOf("\nFROM "))).not.toMatch(/^COPY (src|packages)\b/m)
    // `npm start` builds first where the tools and sources are, and uses what was built where not.
    expect(pkg.scripts.prestart).toBe("npm run build:web --silent && npm run build:service --silent")
    expect(pkg.scripts["build:web"]).toBe("node scripts/build-dashboard.mjs")
    expect(pkg.scripts["build:service"]).toBe("node scripts/build-service.mjs")
  })

  it("copy only files that exist", () => {
    for (const match of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const path of match[1]!.split(" ")) {
        expect(existsSync(new URL(`../../${path}`, import.meta.url)), path).toBe(true)
      }
    }
  })

  it("compose runs PostgreSQL, Redis and the service with documented variables", () => {
    expect(compose).toMatch(/image: postgres:15/)
    expect(compose).toMatch(/image: redis:/)
    expect(compose).toMatch(/build: \./)
    const block = compose.slice(compose.indexOf("  service:"))
    const environment = block.slice(block.indexOf("environment:"), block.indexOf("depends_on:"))
    const names = [...environment.matchAll(/^\s+([A-Z_]+):/gm)].map((m) => m[1]!)
    expect(names).toContain("DATABASE_URL")
    for (const name of names) expect(readme, name).toContain(`| ${name} |`)
  })
})
