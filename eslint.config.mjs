// Lint and format: typescript-eslint's recommended rules where they catch mistakes, and
// dprint (through @effect/eslint-plugin, with the Effect repository's settings) for layout.
// `npm run lint` checks (and runs the Effect language service's diagnostics);
// `npx eslint . --fix` rewrites the layout.
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["node_modules/**", ".data/**", "web/dist/**", "**/*.mjs", "**/*.js", "clients/typescript/dist/**"] },
  {
    files: ["src/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "scripts/**/*.ts", "clients/**/*.ts", "examples/**/*.ts", "web/**/*.ts", "web/**/*.tsx", "vitest.config.ts"],
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
  }
)
