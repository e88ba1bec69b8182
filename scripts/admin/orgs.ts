import { Effect, Schema } from "effect"
import { idOrNull, OrgId } from "../../src/Domain/Ids.js"
import { PlanId } from "../../src/Domain/Plans.js"
import { EndpointOpenings } from "../../src/Services/Gateway/EndpointOpenings.js"
import { CreditAdjustments } from "../../src/Services/Operations/CreditAdjustments.js"
import { DataDeletion } from "../../src/Services/Operations/DataDeletion.js"
import { OrgPlans } from "../../src/Services/Operations/OrgPlans.js"
import { type AdminCommand, CommandError, type ParsedArgs, requiredOption } from "./command.js"
import { actingAdmin, runOperation, textOption } from "./operations.js"

/** Orgs: credit adjustments, freezes, plans, per-org openings, and data-deletion requests. */
const orgOf = (args: ParsedArgs) =>
  Effect.flatMap(requiredOption(args, "org"), (org) => {
    const id = idOrNull(OrgId, org.toLowerCase())
    return id === null ? Effect.fail(new CommandError("--org must be an org id (UUID)")) : Effect.succeed(id)
  })

export const orgCommands: Record<string, AdminCommand> = {
  adjust: {
    summary: "Credit (positive) or debit (negative) an org, with a reason",
    usage:
      "adjust --admin <email> --org <org id> --credits <signed whole credits> --reason <text> [--confirm <credits>]",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const orgId = yield* orgOf(args)
        const admin = yield* actingAdmin(args)
        return yield* (yield* CreditAdjustments).adjust(admin, orgId, {
          credits: textOption(args, "credits") ?? "",
          reason: textOption(args, "reason"),
          confirm_credits: textOption(args, "confirm")
        })
      }))
  },
  freeze: {
    summary: "Freeze an org's credits (calls answer credits_frozen)",
    usage: "freeze --admin <email> --org <org id> --reason <text>",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const orgId = yield* orgOf(args)
        const admin = yield* actingAdmin(args)
        return yield* (yield* CreditAdjustments).freeze(admin, orgId, textOption(args, "reason"))
      }))
  },
  unfreeze: {
    summary: "Unfreeze an org's credits",
    usage: "unfreeze --admin <email> --org <org id> [--reason <text>]",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const orgId = yield* orgOf(args)
        const admin = yield* actingAdmin(args)
        return yield* (yield* CreditAdjustments).unfreeze(admin, orgId, textOption(args, "reason"))
      }))
  },
  plan: {
    summary: "Move an org to another plan",
    usage: "plan --admin <email> --org <org id> --plan payg|pro|max --reason <text>",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const orgId = yield* orgOf(args)
        const plan = yield* requiredOption(args, "plan")
        if (!PlanId.literals.includes(plan as PlanId)) {
          return yield* Effect.fail(new CommandError("--plan must be payg, pro or max"))
        }
        const admin = yield* actingAdmin(args)
        return yield* (yield* OrgPlans).setPlan(admin, orgId, plan as PlanId, textOption(args, "reason"))
      }))
  },
  open: {
    summary: "Open an on-request endpoint for one org",
    usage: "open --admin <email> --org <org id> --endpoint <endpoint id> [--reason <text>]",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const orgId = yield* orgOf(args)
        const endpoint = yield* requiredOption(args, "endpoint")
        const admin = yield* actingAdmin(args)
        return yield* (yield* EndpointOpenings).open(admin, orgId, endpoint, textOption(args, "reason"))
      }))
  },
  close: {
    summary: "Close an org's opening of an endpoint",
    usage: "close --admin <email> --org <org id> --endpoint <endpoint id> --reason <text>",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const orgId = yield* orgOf(args)
        const endpoint = yield* requiredOption(args, "endpoint")
        const admin = yield* actingAdmin(args)
        return yield* (yield* EndpointOpenings).close(admin, orgId, endpoint, textOption(args, "reason"))
      }))
  },
  requests: {
    summary: "The queue of orgs' opening requests",
    usage: "requests [--status pending|opened|declined]",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const status = textOption(args, "status")
        if (status !== undefined && status !== "pending" && status !== "opened" && status !== "declined") {
          return yield* Effect.fail(new CommandError("--status must be pending, opened or declined"))
        }
        return yield* (yield* EndpointOpenings).queue(status)
      }))
  },
  deletions: {
    summary: "The queue of data-deletion requests",
    usage: "deletions [--status pending|completed|cancelled]",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const status = textOption(args, "status")
        if (status !== undefined && status !== "pending" && status !== "completed" && status !== "cancelled") {
          return yield* Effect.fail(new CommandError("--status must be pending, completed or cancelled"))
        }
        return yield* (yield* DataDeletion).queue(status)
      }))
  },
  erase: {
    summary: "Carry out a data-deletion request (erases the org's personal data, closes it)",
    usage: "erase --admin <email> --request <request id>",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const request = idOrNull(Schema.UUID, yield* requiredOption(args, "request"))
        if (request === null) return yield* Effect.fail(new CommandError("--request must be a request id (UUID)"))
        const admin = yield* actingAdmin(args)
        return yield* (yield* DataDeletion).carryOut(admin, request)
      }))
  },
  decline: {
    summary: "Decline an opening request",
    usage: "decline --admin <email> --request <request id> --reason <text>",
    run: (args) =>
      runOperation(Effect.gen(function*() {
        const request = idOrNull(Schema.UUID, yield* requiredOption(args, "request"))
        if (request === null) return yield* Effect.fail(new CommandError("--request must be a request id (UUID)"))
        const admin = yield* actingAdmin(args)
        return yield* (yield* EndpointOpenings).decline(admin, request, textOption(args, "reason"))
      }))
  }
}
