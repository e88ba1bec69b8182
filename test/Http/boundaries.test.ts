import { ESLint } from "eslint"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * The boundary rule of eslint.config.mjs (`npm run lint`): imports run one way
 * (docs/conventions.md). Each case lints one import in a file where it would sit and reads
 * whether the rule refuses it; the allowed cases keep the rule from refusing everything.
 */
const eslint = new ESLint({ cwd: fileURLToPath(new URL("../..", import.meta.url)) })

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
