import { Effect, Layer } from "effect"
import type { OrgId } from "../../Domain/Ids.js"
import { AppConfig } from "../AppConfig.js"
import { Events } from "../Events/Events.js"
import { MailOutboxLive } from "../Mailer/MailOutboxLive.js"
import { Ledger } from "./Ledger.js"
import { LedgerLive } from "./LedgerLive.js"
import { LedgerMaintenance } from "./LedgerMaintenance.js"

/**
 * The ledger and its maintenance with everything they need but the database, for
 * programs outside the server: the admin script's `credit` and the test suites.
 */
export const LedgerStandaloneLive = Layer.mergeAll(
  LedgerLive,
  LedgerMaintenance.Default.pipe(Layer.provide(LedgerLive))
).pipe(Layer.provide(Events.Default), Layer.provide(MailOutboxLive), Layer.provide(AppConfig.Default))

/** Credits an org through the ledger: a top-up (counts as funding) or an adjustment. */
export const creditOrg = (orgId: OrgId, credits: bigint, kind: "top_up" | "adjustment", note: string) =>
  Effect.flatMap(Ledger, (ledger) => ledger.credit(orgId, credits, kind, note))
