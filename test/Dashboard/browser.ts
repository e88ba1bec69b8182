import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { build } from "vite"

/**
 * Debian's Chromium driven by playwright-core (never a downloaded browser), headless, with
 * the flags the machine needs. Each journey gets a fresh context (its own cookies).
 */
export const CHROMIUM_PATH = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

const root = new URL("../../", import.meta.url)

/** The dashboard is built by `npm test` before the suites; a suite run alone builds it once. */
export const ensureDashboardBuilt = async () => {
  if (existsSync(new URL("web/dist/index.html", root))) return
  await build({ configFile: new URL("web/vite.config.ts", root).pathname, logLevel: "warn" })
}

export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update"
    ]
  })

export const DESKTOP = { width: 1280, height: 800 } as const
export const PHONE = { width: 390, height: 844 } as const

/**
 * A page that records every console error and uncaught exception, for the journey to assert
 * none, and the browser's own dialogs (`confirm()`) it was shown, in `dialogs`.
 */
export const openPage = async (context: BrowserContext) => {
  const page = await context.newPage()
  const problems: Array<string> = []
  const dialogs: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`)
  })
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`))
  // Confirmation dialogs (revoke, remove) are accepted, as a person would.
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message())
    void dialog.accept()
  })
  return { page, problems, dialogs }
}

/** Reduced motion: progress bars show where they are, not an animation towards it, in screenshots. */
export const newContext = (browser: Browser, baseURL: string, viewport: { width: number; height: number } = DESKTOP) =>
  browser.newContext({ baseURL, viewport, permissions: ["clipboard-read", "clipboard-write"], reducedMotion: "reduce" })

const screenshotDir = new URL("docs/screenshots/", root)

/** A screenshot for the README (committed under docs/screenshots). */
export const screenshot = async (page: Page, name: string) => {
  mkdirSync(screenshotDir, { recursive: true })
  await page.screenshot({ path: new URL(`${name}.png`, screenshotDir).pathname, fullPage: false })
}

const axeSource = readFileSync(new URL("node_modules/axe-core/axe.min.js", root), "utf8")

/**
 * axe-core's serious and critical violations on the page as it is now, one line each
 * ("color-contrast: .badge-live (2)"). Evaluated through the browser's own channel, which
 * the page's Content-Security-Policy does not govern.
 */
export const accessibilityProblems = (page: Page): Promise<Array<string>> =>
  accessibilityFindings(page, ["serious", "critical"])

/** axe-core's violations of every impact (minor and moderate too: heading order, landmarks, empty headers). */
export const allAccessibilityFindings = (page: Page): Promise<Array<string>> =>
  accessibilityFindings(page, ["minor", "moderate", "serious", "critical"])

const accessibilityFindings = async (page: Page, impacts: ReadonlyArray<string>): Promise<Array<string>> => {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as {
      axe: {
        run: (
          context: Document,
          options: unknown
        ) => Promise<
          {
            violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: Array<unknown> }> }>
          }
        >
      }
    }).axe
    const result = await axe.run(document, { resultTypes: ["violations"] })
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => n.target.join(" "))
    }))
  })
  return violations
    .filter((v) => v.impact !== null && impacts.includes(v.impact))
    .map((v) => `${v.id}: ${v.targets.slice(0, 3).join(", ")} (${v.targets.length})`)
}
