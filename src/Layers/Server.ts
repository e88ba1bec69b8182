import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { ClientAddress } from "../Http/ClientAddress.js"
import { AccountHandlers } from "../Http/Handlers/AccountHandlers.js"
import { AdminSessionHandlers, AdminSignInHandlers } from "../Http/Handlers/AdminAuthHandlers.js"
import {
  AdminAuditHandlers,
  AdminGatewayHandlers,
  AdminOrgsHandlers,
  AdminToolsHandlers
} from "../Http/Handlers/AdminOperationsHandlers.js"
import { AdminX402Handlers } from "../Http/Handlers/AdminX402Handlers.js"
import { AgentConnectionsHandlers } from "../Http/Handlers/AgentConnectionsHandlers.js"
import { AgentSelfHandlers, AgentsHandlers } from "../Http/Handlers/AgentsHandlers.js"
import { ApiReferencePageLive } from "../Http/Handlers/ApiReferencePage.js"
import { AuthHandlers, AuthSessionHandlers } from "../Http/Handlers/AuthHandlers.js"
import {
  AdminBillingHandlers,
  BillingHandlers,
  PaymentWebhookHandlers,
  SandboxPaymentsHandlers
} from "../Http/Handlers/BillingHandlers.js"
import { DashboardFilesLive } from "../Http/Handlers/DashboardFiles.js"
import { DocsHandlers } from "../Http/Handlers/DocsHandlers.js"
import { EventsHandlers } from "../Http/Handlers/EventsHandlers.js"
import { FrontDoorLive } from "../Http/Handlers/FrontDoor.js"
import { GatewayCallsHandlers, GatewayHandlers, GatewayProvidersHandlers } from "../Http/Handlers/GatewayHandlers.js"
import { HealthHandlers } from "../Http/Handlers/HealthHandlers.js"
import { KeyDirectoryRouteLive } from "../Http/Handlers/KeyDirectoryRoute.js"
import { MetricsRouteLive } from "../Http/Handlers/MetricsRoute.js"
import { OpenApiRouteLive } from "../Http/Handlers/OpenApiRoute.js"
import { OrgKeysHandlers } from "../Http/Handlers/OrgKeysHandlers.js"
import { OrgsHandlers } from "../Http/Handlers/OrgsHandlers.js"
import { PublicHandlers, WaitlistHandlers } from "../Http/Handlers/PublicHandlers.js"
import {
  AdminDisputesHandlers,
  ApprovalLinksHandlers,
  OrgPurchasingHandlers,
  PurchasingHandlers
} from "../Http/Handlers/PurchasingHandlers.js"
import { SigningKeysHandlers } from "../Http/Handlers/SigningKeysHandlers.js"
import { UsageHandlers } from "../Http/Handlers/UsageHandlers.js"
import { WebhooksHandlers } from "../Http/Handlers/WebhooksHandlers.js"
import { X402RequestsLive } from "../Http/Handlers/X402Requests.js"
import { ConsentRoutesLive } from "../Http/Mcp/Consent.js"
import { McpRouteLive } from "../Http/Mcp/McpRoute.js"
import { OAuthRoutesLive } from "../Http/Mcp/OAuthRoutes.js"
import { ProtectedResourceLive } from "../Http/Mcp/ProtectedResource.js"
import { AgentAuthLive, OrgAuthLive, SessionAuthLive, SessionOnlyLive } from "../Http/Middleware/Authentication.js"
import { AdminAuthLive } from "../Http/Middleware/Authentication.js"
import { EdgeDefaults, EdgeMiddleware } from "../Http/Middleware/Edge.js"
import { PublicRateLimitLive, WaitlistRateLimitLive } from "../Http/Middleware/RateLimits.js"
import { DocumentedApi } from "../Http/OpenApi/Document.js"
import { Agents } from "../Services/Agents/Agents.js"
import { AgentsRepo } from "../Services/Agents/AgentsRepo.js"
import { AppConfig } from "../Services/AppConfig.js"
import { Accounts } from "../Services/Auth/Accounts.js"
import { Admins } from "../Services/Auth/Admins.js"
import { AuthConfig } from "../Services/Auth/AuthConfig.js"
import { Credentials } from "../Services/Auth/Credentials.js"
import { EmailSignIn } from "../Services/Auth/EmailSignIn.js"
import { IdentityProvider } from "../Services/Auth/IdentityProvider.js"
import { Sessions } from "../Services/Auth/Sessions.js"
import { BenchmarkRuns } from "../Services/Benchmarks/BenchmarkRuns.js"
import { BenchmarkWorkersLive } from "../Services/Benchmarks/BenchmarkWorkers.js"
import { BillingLive, LedgerWakingAutoReload } from "../Services/Billing/BillingLive.js"
import { BillingWorkersLive } from "../Services/Billing/BillingWorkers.js"
import { KeyDirectory } from "../Services/BotAuth/KeyDirectory.js"
import { ProviderSigning } from "../Services/BotAuth/ProviderSigning.js"
import { Catalogue } from "../Services/Catalogue/Catalogue.js"
import { Events } from "../Services/Events/Events.js"
import { AgentBalance } from "../Services/Gateway/AgentBalance.js"
import { CallLog } from "../Services/Gateway/CallLog.js"
import { EndpointOpenings } from "../Services/Gateway/EndpointOpenings.js"
import { Gateway } from "../Services/Gateway/Gateway.js"
import { GatewaySettings } from "../Services/Gateway/GatewaySettings.js"
import { MoneyWorkersLive } from "../Services/Gateway/MoneyWorkers.js"
import { LedgerLive } from "../Services/Ledger/LedgerLive.js"
import { LedgerMaintenance } from "../Services/Ledger/LedgerMaintenance.js"
import { Lifecycle } from "../Services/Lifecycle/Lifecycle.js"
import { Readiness } from "../Services/Lifecycle/Readiness.js"
import { MailerLive } from "../Services/Mailer/Mailer.js"
import { MailOutboxLive } from "../Services/Mailer/MailOutboxLive.js"
import { MailWorkerLive } from "../Services/Mailer/MailWorker.js"
import { Notifications } from "../Services/Notifications/Notifications.js"
import { AuthorizationServer } from "../Services/OAuth/AuthorizationServer.js"
import { Connections } from "../Services/OAuth/Connections.js"
import { RecordsSweepLive } from "../Services/OAuth/RecordsSweep.js"
import { Backlogs } from "../Services/Observability/Backlogs.js"
import { ObservabilityConfig } from "../Services/Observability/ObservabilityConfig.js"
import { AuditLog } from "../Services/Operations/AuditLog.js"
import { CreditAdjustments } from "../Services/Operations/CreditAdjustments.js"
import { DataDeletion } from "../Services/Operations/DataDeletion.js"
import { OrgPlans } from "../Services/Operations/OrgPlans.js"
import { OrgKeys } from "../Services/OrgKeys/OrgKeys.js"
import { Orgs } from "../Services/Orgs/Orgs.js"
import { PublicUrl } from "../Services/PublicUrl.js"
import { JobWorkersLive } from "../Services/Purchasing/Jobs.js"
import { PurchasingLive } from "../Services/Purchasing/PurchasingLive.js"
import { RateLimiter, RateLimitStoreLive } from "../Services/RateLimiter/RateLimiter.js"
import { SigningKeys } from "../Services/Receipts/SigningKeys.js"
import { SmsLive } from "../Services/Sms/Sms.js"
import { AdapterChecksLive } from "../Services/Tools/AdapterChecks.js"
import { ToolAdmin } from "../Services/Tools/ToolAdmin.js"
import { Tools } from "../Services/Tools/Tools.js"
import { Exports } from "../Services/Usage/Exports.js"
import { Refusals } from "../Services/Usage/Refusals.js"
import { Usage } from "../Services/Usage/Usage.js"
import { Waitlist } from "../Services/Waitlist/Waitlist.js"
import { WebhookWorkerLive } from "../Services/Webhooks/Delivery.js"
import { Webhooks } from "../Services/Webhooks/Webhooks.js"
import { X402Reports } from "../Services/X402/X402Reports.js"
import { ClientErrorsLive } from "./ClientErrors.js"
import { announceReady } from "./Cluster.js"
import { connectionLimits, ConnectionsLive } from "./Connections.js"
import { DatabaseLive } from "./Database.js"
import { DrainingIncomingMessage } from "./DrainingIncomingMessage.js"
import { LoggingLive } from "./Logging.js"
import { MigrationsLive } from "./Migrations.js"
import { ServeApiLive } from "./ServeApi.js"
import { ShutdownLive } from "./Shutdown.js"
import { TelemetryLive } from "./Telemetry.js"

/**
 * Composition of the whole service. Configuration comes from the ambient ConfigProvider
 * (the environment in production, a map in tests), so one process can run several.
 * Each area adds its services, middlewares, handlers and workers to the lists below.
 */

/** BASE_URL when set, else the address the server actually listens on. */
const PublicUrlLive = Layer.effect(
  PublicUrl,
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.baseUrl)) return config.baseUrl.value
    const server = yield* HttpServer.HttpServer
    const address = server.address
    return address._tag === "TcpAddress" ? `http://localhost:${address.port}` : "http://localhost"
  })
)

/** Loads the catalogue and the tools from ./data into the database at start (idempotent). */
const SeedDataLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const catalogue = yield* Catalogue
    const tools = yield* Tools
    const loaded = yield* catalogue.load
    const toolCount = yield* tools.load
    yield* Effect.logInfo(
      `Catalogue loaded: ${loaded.endpoints} endpoints from ${loaded.providers} providers; ${toolCount} tools`
    )
  })
)

const DatabaseReady = Layer.provideMerge(MigrationsLive, DatabaseLive)

/** Services shared by everything above them. */
const Infrastructure = Layer.mergeAll(
  RateLimiter.Default.pipe(Layer.provide(RateLimitStoreLive)),
  ClientAddress.Default,
  MailerLive,
  SmsLive,
  MailOutboxLive,
  Events.Default,
  ObservabilityConfig.Default,
  Backlogs.Default
)

/** One entry per capability. */
const Services = Layer.mergeAll(
  Catalogue.Default,
  Webhooks.Default,
  Notifications.Default,
  Tools.Default,
  Waitlist.Default,
  Credentials.Default,
  LedgerLive,
  Gateway.Default.pipe(Layer.provide(LedgerWakingAutoReload)),
  CallLog.Default,
  AgentBalance.Default.pipe(Layer.provide(LedgerLive)),
  LedgerMaintenance.Default.pipe(Layer.provide(LedgerLive)),
  AuthConfig.Default,
  Sessions.Default,
  EmailSignIn.Default,
  IdentityProvider.Default,
  Accounts.Default,
  Orgs.Default.pipe(Layer.provide(LedgerLive)),
  Agents.Default,
  AgentsRepo.Default,
  OrgKeys.Default,
  Admins.Default,
  PurchasingLive,
  BillingLive,
  Usage.Default.pipe(Layer.provide(LedgerLive)),
  Exports.Default,
  Refusals.Default,
  Readiness.Default,
  ToolAdmin.Default,
  BenchmarkRuns.Default,
  AuditLog.Default,
  CreditAdjustments.Default.pipe(Layer.provide(LedgerLive)),
  OrgPlans.Default,
  GatewaySettings.Default,
  EndpointOpenings.Default,
  DataDeletion.Default,
  SigningKeys.Default,
  KeyDirectory.Default,
  ProviderSigning.Default,
  X402Reports.Default
).pipe(Layer.provideMerge(Infrastructure))

const Middlewares = Layer.mergeAll(
  PublicRateLimitLive,
  WaitlistRateLimitLive,
  AgentAuthLive,
  OrgAuthLive,
  SessionOnlyLive,
  SessionAuthLive,
  AdminAuthLive
)

/** MCP's authorization server and the connections it makes (they need PublicUrl, so they sit beside the routes). */
const OAuthLive = Connections.Default.pipe(Layer.provideMerge(AuthorizationServer.Default))

const McpRoutes = Layer.mergeAll(McpRouteLive, OAuthRoutesLive, ConsentRoutesLive, AgentConnectionsHandlers).pipe(
  Layer.provide(OAuthLive)
)

const Handlers = Layer.mergeAll(
  PublicHandlers,
  WebhooksHandlers,
  EventsHandlers,
  WaitlistHandlers,
  DocsHandlers,
  SigningKeysHandlers,
  GatewayHandlers,
  GatewayCallsHandlers,
  GatewayProvidersHandlers,
  McpRoutes,
  OpenApiRouteLive,
  ApiReferencePageLive,
  FrontDoorLive,
  DashboardFilesLive,
  ProtectedResourceLive,
  MetricsRouteLive,
  KeyDirectoryRouteLive,
  AuthHandlers,
  AuthSessionHandlers,
  AccountHandlers,
  OrgsHandlers,
  AgentsHandlers,
  AgentSelfHandlers,
  OrgKeysHandlers,
  AdminSignInHandlers,
  AdminSessionHandlers,
  PurchasingHandlers,
  OrgPurchasingHandlers,
  ApprovalLinksHandlers,
  AdminDisputesHandlers,
  BillingHandlers,
  PaymentWebhookHandlers,
  SandboxPaymentsHandlers,
  AdminBillingHandlers,
  AdminToolsHandlers,
  AdminOrgsHandlers,
  AdminGatewayHandlers,
  AdminAuditHandlers,
  AdminX402Handlers,
  UsageHandlers,
  HealthHandlers
).pipe(Layer.provide(Middlewares))

/** Background fibers (durable-row workers, sweepers), scoped to the server. */
const Workers = Layer.mergeAll(
  Layer.empty,
  MailWorkerLive,
  MoneyWorkersLive,
  WebhookWorkerLive,
  JobWorkersLive,
  BillingWorkersLive,
  BenchmarkWorkersLive,
  RecordsSweepLive,
  AdapterChecksLive
)

const ApiLive = HttpApiBuilder.api(DocumentedApi).pipe(Layer.provide(Handlers))

export const HttpLive = ServeApiLive.pipe(
  Layer.provide(EdgeMiddleware),
  Layer.provide(X402RequestsLive),
  Layer.provide(EdgeDefaults),
  Layer.provide(ApiLive),
  Layer.provide(Workers),
  Layer.provideMerge(PublicUrlLive),
  Layer.provide(SeedDataLive),
  Layer.provide(Services),
  Layer.provide(DatabaseReady),
  Layer.provide(AppConfig.Default)
)

/** The service listening on PORT (0 picks a free port, as the tests do); it offers its server and PublicUrl. */
export const ServerLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const limits = yield* connectionLimits
    const nodeServer = createServer({ IncomingMessage: DrainingIncomingMessage })
    // ShutdownLive is built last so that its draining runs first when the service stops.
    return ShutdownLive(nodeServer).pipe(
      Layer.provideMerge(ClientErrorsLive(nodeServer)),
      Layer.provideMerge(ConnectionsLive(nodeServer, limits)),
      Layer.provideMerge(HttpLive),
      Layer.tap((context) =>
        Effect.zipRight(
          Effect.logInfo(`Service ready at ${Context.get(context, PublicUrl)}`),
          announceReady(Context.get(context, PublicUrl))
        )
      ),
      // The accept queue within what the open-files limit leaves (Connections.ts).
      Layer.provideMerge(
        NodeHttpServer.layer(() => nodeServer, { port: config.port, host: "0.0.0.0", backlog: limits.backlog })
      ),
      Layer.provideMerge(Lifecycle.Default)
    )
  })
).pipe(Layer.provide(AppConfig.Default), Layer.provide(TelemetryLive), Layer.provide(LoggingLive))
