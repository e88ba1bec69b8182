// Lint and format: typescript-eslint's recommended rules where they catch mistakes, and
// dprint (through @effect/eslint-plugin, with the Effect repository's settings) for layout.
// `npm run lint` checks (and runs the Effect language service's diagnostics);
// `npx eslint . --fix` rewrites the layout.
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"
import capabilities from "./eslint-rules/capabilities.mjs"

// The boundary rule: imports run one way (docs/conventions.md, Layout). Each entry names
// files and the imports they may not use: [regular expression on the import's text, why].
// The contract (src/Domain, src/Errors, src/Http/Api.ts, src/Http/Groups,
// src/Http/Security/*Tags.ts: the package @agent-gateway/contract) imports only its own
// dependencies, no Node module, and nothing of the server.
const contractLibraries = [
  "^(?!\\.|effect(/|$)|@effect/(platform|sql|experimental)(/|$)|ipaddr\\.js$)",
  "The contract imports only effect, @effect/platform, @effect/sql and ipaddr.js, no node:*"
]
const onlyContract = "imports only the contract (Domain, Errors, Groups, Security/*Tags)"
const restrict = (files, patterns) => ({
  files,
  rules: {
    "no-restricted-imports": ["error", {
      patterns: patterns.map(([regex, why]) => ({ regex, message: `${why}: imports run one way (docs/conventions.md).` }))
    }]
  }
})
const boundaries = [
  restrict(["src/Domain/**/*.ts"], [contractLibraries, ["^\\.\\./", "Domain imports nothing outside Domain"]]),
  restrict(["src/Errors/**/*.ts"], [contractLibraries, ["^\\.\\./(?!Domain/)", "Errors imports only Domain and Errors"]]),
  restrict(["src/Http/Groups/**/*.ts"], [
    contractLibraries,
    ["^\\.\\./(?!Security/\\w+Tags\\.js$|\\.\\./(Domain|Errors)/)", `A group ${onlyContract}`]
  ]),
  restrict(["src/Http/Security/*Tags.ts"], [
    contractLibraries,
    ["^\\./(?!\\w+Tags\\.js$)|^\\.\\./(?!Groups/|\\.\\./(Domain|Errors)/)", `A middleware tag ${onlyContract}`]
  ]),
  restrict(["src/Http/Api.ts"], [
    contractLibraries,
    ["^\\./(?!Groups/|Security/\\w+Tags\\.js$)|^\\.\\./(?!Domain/|Errors/)", `The Api ${onlyContract}`]
  ]),
  restrict(["src/Services/**/*.ts"], [
    ["^(\\.\\./)+Http/(?!Api\\.js$|Groups/|Security/\\w+Tags\\.js$)", "Services import of Http only the contract"],
    ["^(\\.\\./)+Layers/", "Services never import Layers"]
  ]),
  restrict(["web/src/**/*.ts", "web/src/**/*.tsx", "clients/typescript/src/**/*.ts"], [
    ["^(\\.\\./)+src/", "The dashboard and the client import the contract as @agent-gateway/contract/..., not from src/"]
  ])
]

// The capability rules (eslint-rules/capabilities.mjs): between the folders of src/Services
// no import circle, and no statement fragment taken from another capability.
// The plugin is known everywhere (test/Http/boundaries.test.ts points its rules at a fixture).
const capabilityRules = [
  { plugins: { capabilities } },
  {
    files: ["src/Services/**/*.ts"],
    rules: { "capabilities/no-circle": "error", "capabilities/no-fragment-across": "error" }
  }
]

export default tseslint.config(
  { ignores: ["node_modules/**", ".data/**", "web/dist/**", "**/*.mjs", "**/*.js", "clients/typescript/dist/**", "packages/contract/dist/**"] },
  {
    files: ["src/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "scripts/**/*.ts", "clients/**/*.ts", "packages/*/src/**/*.ts", "examples/**/*.ts", "web/**/*.ts", "web/**/*.tsx", "vitest.config.ts"],
    extends: [tseslint.configs.base],
    plugins: { "@effect": effect },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      "no-debugger": "error",
      "no-var": "error",
      "prefer-const": "error",
      "eqeqeq": ["error", "always", { null: "ignore" }],
      "@typescript-eslint/no-unused-vars": "off"
    }
  },
  ...boundaries,
  ...capabilityRules
)
