import { Layer } from "effect"
import { Approvals } from "../Approvals/Approvals.js"
import { LedgerLive } from "../Ledger/LedgerLive.js"
import { Tools } from "../Tools/Tools.js"
import { Disputes } from "./Disputes.js"
import { Execute } from "./Execute.js"
import { JobRunner } from "./Jobs.js"
import { JobSignal } from "./JobSignal.js"
import { PurchasingConfig } from "./PurchasingConfig.js"
import { Receipts } from "./Receipts.js"
import { Recommend } from "./Recommend.js"

/** Every purchasing service, for the server's Services list (the workers are JobWorkersLive). */
export const PurchasingLive = Layer.mergeAll(
  PurchasingConfig.Default,
  JobSignal.Default,
  Recommend.Default,
  Approvals.Default,
  Receipts.Default,
  Execute.Default,
  JobRunner.Default,
  Disputes.Default
).pipe(Layer.provide(LedgerLive), Layer.provide(Tools.Default))
