import { ESLint } from "eslint"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * The boundary rule of eslint.config.mjs (`npm run lint`): imports run one way
 * (docs/conventions.md). Each case lints one import in a file where it would sit and reads
 * whether the rule refuses it; the allowed cases keep the rule from refusing everything.
 */
const repository = fileURLToPath(new URL("../..", import.meta.url))
const eslint = new ESLint({ cwd: repository })

const refused = async (filePath: string, from: string): Promise<boolean> => {
  const [result] = await eslint.lintText(`import { x } from "${from}"\nexport { x }\n`, { filePath })
  return result!.messages.some((message) => message.ruleId === "no-restricted-imports")
}

const upward: ReadonlyArray<readonly [file: string, from: string]> = [
  ["src/Domain/Example.ts", "../Services/Auth/Credentials.js"],
  ["src/Domain/Example.ts", "../Http/Api.js"],
  ["src/Domain/Example.ts", "../Errors/ApiErrors.js"],
  ["src/Domain/Example.ts", "node:crypto"],
  ["src/Domain/Example.ts", "pg"],
  ["src/Errors/Example.ts", "../Services/Auth/Credentials.js"],
  ["src/Errors/Example.ts", "../Http/Groups/PathIds.js"],
  ["src/Http/Groups/Example.ts", "../OpenApi/Document.js"],
  ["src/Http/Groups/Example.ts", "../Security/Cookies.js"],
  ["src/Http/Groups/Example.ts", "../../Services/Auth/Roles.js"],
  ["src/Http/Groups/Example.ts", "node:url"],
  ["src/Http/Security/AuthTags.ts", "../../Services/Auth/Credentials.js"],
  ["src/Http/Security/AuthTags.ts", "./Cookies.js"],
  ["src/Http/Api.ts", "./OpenApi/Document.js"],
  ["src/Http/Api.ts", "../Layers/Server.js"],
  ["src/Services/Agents/Example.ts", "../../Http/Middleware/Authentication.js"],
  ["src/Services/Agents/Example.ts", "../../Http/OpenApi/Document.js"],
  ["src/Services/Agents/Example.ts", "../../Layers/Server.js"],
  ["src/Services/Example.ts", "../Layers/Database.js"],
  ["web/src/pages/Example.tsx", "../../../src/Domain/Ids.js"],
  ["web/src/components/billing/Example.tsx", "../../../../src/Http/Api.js"],
  ["clients/typescript/src/example.ts", "../../../src/Http/Api.js"]
]

const allowed: ReadonlyArray<readonly [file: string, from: string]> = [
  ["src/Domain/Example.ts", "./Ids.js"],
  ["src/Domain/Example.ts", "effect"],
  ["src/Domain/Example.ts", "@effect/sql"],
  ["src/Errors/Example.ts", "../Domain/Ids.js"],
  ["src/Http/Groups/Example.ts", "../../Domain/Ids.js"],
  ["src/Http/Groups/Example.ts", "../Security/AuthTags.js"],
  ["src/Http/Groups/Example.ts", "./PathIds.js"],
  ["src/Http/Groups/Example.ts", "@effect/platform"],
  ["src/Http/Security/AuthTags.ts", "../../Errors/Wire.js"],
  ["src/Http/Api.ts", "./Groups/AgentsGroup.js"],
  ["src/Services/Agents/Example.ts", "../../Http/Groups/PathIds.js"],
  ["src/Services/Agents/Example.ts", "../../Domain/Ids.js"],
  ["src/Http/Handlers/Example.ts", "../../Services/Agents/Agents.js"],
  ["web/src/pages/Example.tsx", "@agent-gateway/contract/Domain/Ids.js"],
  ["web/src/pages/Example.tsx", "../api/hooks.js"],
  ["clients/typescript/src/example.ts", "@agent-gateway/contract/Http/Api.js"]
]

describe("the boundary rule", () => {
  it.each(upward)("refuses in %s an import of %s", async (file, from) => {
    expect(await refused(file, from)).toBe(true)
  })

  it.each(allowed)("lets %s import %s", async (file, from) => {
    expect(await refused(file, from)).toBe(false)
  })
})

/**
 * The capability rules (eslint-rules/capabilities.mjs), set on src/Services by
 * eslint.config.mjs, here pointed at a small tree of capability folders
 * (`capabilityFixture/`: Alpha imports Beta, Beta imports Gamma; Fence exports fragments).
 * Each case lints a module's text at a path in that tree and reads what the rules say.
 */
const fixture = "test/Http/capabilityFixture"
const fixtureLint = new ESLint({
  cwd: repository,
  overrideConfig: {
    files: [`${fixture}/**/*.ts`],
    rules: {
      "capabilities/no-circle": ["error", { root: fixture }],
      "capabilities/no-fragment-across": ["error", { root: fixture }]
    }
  }
})

const capabilityMessages = async (linter: ESLint, file: string, text: string) => {
  const [result] = await linter.lintText(text, { filePath: path.join(repository, file) })
  return result!.messages.filter((message) => message.ruleId?.startsWith("capabilities/"))
}

describe("the capability rules", () => {
  it("are on for every module of src/Services", async () => {
    const config = await eslint.calculateConfigForFile("src/Services/Agents/Agents.ts")
    expect(config.rules["capabilities/no-circle"]).toEqual([2])
    expect(config.rules["capabilities/no-fragment-across"]).toEqual([2])
  })

  it("refuses an import that closes a circle between folders, naming the circle and each hop", async () => {
    const messages = await capabilityMessages(
      fixtureLint,
      `${fixture}/Gamma/Example.ts`,
      `import { alpha } from "../Alpha/Alpha.js"\nexport const example = alpha\n`
    )
    expect(messages.map((message) => message.message)).toEqual([
      "Gamma imports Alpha, which closes a circle between capability folders: Gamma -> Alpha -> Beta -> Gamma " +
      "(this file imports Alpha/Alpha.ts; Alpha/Alpha.ts imports Beta/Beta.ts; Beta/Beta.ts imports Gamma/Gamma.ts). " +
      "Imports run one way (docs/conventions.md)."
    ])
  })

  it("reads the linted module's own imports from its text, not from its copy on disk", async () => {
    const messages = await capabilityMessages(
      fixtureLint,
      `${fixture}/Gamma/Gamma.ts`,
      `import { beta } from "../Beta/Beta.js"\nexport const gamma = beta\n`
    )
    expect(messages.map((message) => message.ruleId)).toEqual(["capabilities/no-circle"])
  })

  it("refuses a dynamic import that closes a circle", async () => {
    const messages = await capabilityMessages(
      fixtureLint,
      `${fixture}/Beta/Example.ts`,
      `export const later = () => import("../Alpha/Alpha.js")\n`
    )
    expect(messages.map((message) => message.ruleId)).toEqual(["capabilities/no-circle"])
  })

  it("lets a folder import one that does not reach back, and its own modules", async () => {
    expect(
      await capabilityMessages(
        fixtureLint,
        `${fixture}/Alpha/Example.ts`,
        `import { gamma } from "../Gamma/Gamma.js"\nimport { alpha } from "./Alpha.js"\nexport const example = [alpha, gamma]\n`
      )
    ).toEqual([])
  })

  it("refuses a circle through the real folders of src/Services with the configuration as it is", async () => {
    // Purchasing imports Tools (Execute.ts, Recommend.ts, ...): Tools may not import Purchasing.
    const messages = await capabilityMessages(
      eslint,
      "src/Services/Tools/Example.ts",
      `import { Jobs } from "../Purchasing/Jobs.js"\nexport { Jobs }\n`
    )
    expect(messages.map((message) => message.ruleId)).toEqual(["capabilities/no-circle"])
    expect(messages[0]!.message).toContain("Tools -> Purchasing -> Tools")
  })

  it("finds no circle through the modules that closed one between Gateway, Usage, Purchasing and Tools", async () => {
    // Tools and Purchasing read an endpoint with its provider from the catalogue, not from the
    // gateway; usage reads LIVE_EXECUTE_ENABLED from AppConfig, not from purchasing.
    const results = await eslint.lintFiles([
      "src/Services/Tools/ToolAdmin.ts",
      "src/Services/Purchasing/ToolRunner.ts",
      "src/Services/Usage/Usage.ts",
      "src/Services/Purchasing/Execute.ts",
      "src/Services/Gateway/Gateway.ts"
    ])
    const circles = results.flatMap((result) =>
      result.messages.filter((message) => message.ruleId === "capabilities/no-circle").map((message) => message.message)
    )
    expect(circles).toEqual([])
  })

  const fragments: ReadonlyArray<readonly [what: string, text: string, piece: string]> = [
    ["a function answering a fragment", `import { gate } from "../Fence/Fence.js"\nexport { gate }\n`, "gate"],
    [
      "a branded fragment type",
      `import type { GateFragment } from "../Fence/Fence.js"\nexport type X = GateFragment\n`,
      "GateFragment"
    ],
    [
      "a service whose method answers a statement",
      `import { FenceService } from "../Fence/Fence.js"\nexport { FenceService }\n`,
      "FenceService"
    ],
    ["a module read whole", `import * as Fence from "../Fence/Fence.js"\nexport { Fence }\n`, "gate"],
    ["a re-export", `export { gate } from "../Fence/Fence.js"\n`, "gate"]
  ]

  it.each(fragments)("refuses %s taken from another capability", async (_, text, name) => {
    const messages = await capabilityMessages(fixtureLint, `${fixture}/Alpha/Example.ts`, text)
    expect(messages.map((message) => message.ruleId)).toContain("capabilities/no-fragment-across")
    expect(messages[0]!.message).toMatch(new RegExp(`^\`${name}\` of Fence/Fence\\.ts mentions Statement\\.`))
    expect(messages[0]!.message).toContain("Alpha may not take a statement fragment from Fence")
  })

  it("lets a capability take values that are no fragment from another, and fragments from its own modules", async () => {
    expect(
      await capabilityMessages(
        fixtureLint,
        `${fixture}/Alpha/Example.ts`,
        `import { countOrgs, limit } from "../Fence/Fence.js"\nexport { countOrgs, limit }\n`
      )
    ).toEqual([])
    expect(
      await capabilityMessages(
        fixtureLint,
        `${fixture}/Fence/Example.ts`,
        `import { FenceService, gate } from "./Fence.js"\nexport { FenceService, gate }\n`
      )
    ).toEqual([])
  })
})
