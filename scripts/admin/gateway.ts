import { Effect } from "effect"
import { ProviderSigning } from "../../src/Services/BotAuth/ProviderSigning.js"
import { GatewaySettings } from "../../src/Services/Gateway/GatewaySettings.js"
import { AuditLog } from "../../src/Services/Operations/AuditLog.js"
import { type AdminCommand, CommandError, requiredOption } from "./command.js"
import { actingAdmin, runOperation, textOption } from "./operations.js"

/** The gateway switch, provider caps and request signing, and the audit log. */
export const gatewayCommands: Record<string, AdminCommand> = {
  gateway: {
    summary: "Switch the gateway on or off for every replica",
    usage: "gateway on|off --admin <email> --reason <text>",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const state = args.positional[0]
        if (state !== "on" && state !== "off") {
          return yield* Effect.fail(new CommandError("Say `gateway on` or `gateway off`"))
        }
        const admin = yield* actingAdmin(args)
        return yield* (yield* GatewaySettings).setGatewayEnabled(admin, state === "on", textOption(args, "reason"))
      }))
  },
  cap: {
    summary: "Change a provider's daily call cap per org",
    usage: "cap --admin <email> --provider <provider id> --calls <n> [--reason <text>]",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const provider = yield* requiredOption(args, "provider")
        const calls = Number(yield* requiredOption(args, "calls"))
        const admin = yield* actingAdmin(args)
        return yield* (yield* GatewaySettings).setProviderCap(admin, provider, calls, textOption(args, "reason"))
      }))
  },
  signing: {
    summary: "Sign a provider's requests as the service's (Web Bot Auth), or send them unsigned",
    usage: "signing on|off --admin <email> --provider <provider id> [--reason <text>]",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const state = args.positional[0]
        if (state !== "on" && state !== "off") {
          return yield* Effect.fail(new CommandError("Say `signing on` or `signing off`"))
        }
        const provider = yield* requiredOption(args, "provider")
        const admin = yield* actingAdmin(args)
        return yield* (yield* ProviderSigning).setSigning(admin, provider, state === "on", textOption(args, "reason"))
      }))
  },
  audit: {
    summary: "Read the audit log, newest first",
    usage: "audit [--target <id>] [--action <action>] [--admin-id <id>] [--limit <1-200>]",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const limit = Number(textOption(args, "limit") ?? "50")
        if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
          return yield* Effect.fail(new CommandError("--limit must be 1 to 200"))
        }
        return yield* (yield* AuditLog).list({
          target_id: textOption(args, "target"),
          action: textOption(args, "action"),
          admin_id: textOption(args, "admin-id"),
          limit
        })
      }))
  }
}
