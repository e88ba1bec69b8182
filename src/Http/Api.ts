import { HttpApi, OpenApi } from "@effect/platform"
import { SERVICE_VERSION } from "../Domain/ServiceVersion.js"
import {
  InternalError,
  InvalidInput,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable
} from "../Errors/ApiErrors.js"
import { wire } from "../Errors/Wire.js"
import { AccountGroup } from "./Groups/AccountGroup.js"
import { AdminSessionGroup, AdminSignInGroup } from "./Groups/AdminAuthGroup.js"
import { AdminAuditGroup, AdminGatewayGroup, AdminOrgsGroup, AdminToolsGroup } from "./Groups/AdminOperationsGroup.js"
import { AdminX402Group } from "./Groups/AdminX402Group.js"
import { AgentConnectionsGroup } from "./Groups/AgentConnectionsGroup.js"
import { AgentSelfGroup, AgentsGroup } from "./Groups/AgentsGroup.js"
import { AuthGroup, AuthSessionGroup } from "./Groups/AuthGroup.js"
import { AdminBillingGroup, BillingGroup, PaymentWebhookGroup, SandboxPaymentsGroup } from "./Groups/BillingGroup.js"
import { EventsGroup } from "./Groups/EventsGroup.js"
import { GatewayCallsGroup, GatewayGroup, GatewayProvidersGroup } from "./Groups/GatewayGroup.js"
import { HealthGroup } from "./Groups/HealthGroup.js"
import { OrgKeysGroup } from "./Groups/OrgKeysGroup.js"
import { OrgsGroup } from "./Groups/OrgsGroup.js"
import { DocsGroup, PublicGroup, WaitlistGroup } from "./Groups/PublicGroup.js"
import {
  AdminDisputesGroup,
  ApprovalLinksGroup,
  OrgPurchasingGroup,
  PurchasingGroup
} from "./Groups/PurchasingGroup.js"
import { SigningKeysGroup } from "./Groups/SigningKeysGroup.js"
import { UsageGroup } from "./Groups/UsageGroup.js"
import { WebhooksGroup } from "./Groups/WebhooksGroup.js"

/**
 * The whole HTTP contract, one group per area. Nothing here imports server code, so the
 * typed client, the dashboard, the tests and the docs share it (as the package
 * `@agent-gateway/contract`). The service finishes its OpenAPI document itself
 * (`DocumentedApi` in OpenApi/Document.ts).
 */
export class Api extends HttpApi.make("service")
  .add(PublicGroup)
  .add(WaitlistGroup)
  .add(DocsGroup)
  .add(SigningKeysGroup)
  .add(WebhooksGroup)
  .add(EventsGroup)
  .add(AuthGroup)
  .add(AuthSessionGroup)
  .add(AccountGroup)
  .add(OrgsGroup)
  .add(AgentsGroup)
  .add(AgentSelfGroup)
  .add(AgentConnectionsGroup)
  .add(OrgKeysGroup)
  .add(AdminSignInGroup)
  .add(AdminSessionGroup)
  .add(GatewayGroup)
  .add(GatewayCallsGroup)
  .add(GatewayProvidersGroup)
  .add(PurchasingGroup)
  .add(OrgPurchasingGroup)
  .add(ApprovalLinksGroup)
  .add(AdminDisputesGroup)
  .add(BillingGroup)
  .add(PaymentWebhookGroup)
  .add(SandboxPaymentsGroup)
  .add(AdminBillingGroup)
  .add(AdminToolsGroup)
  .add(AdminOrgsGroup)
  .add(AdminGatewayGroup)
  .add(AdminAuditGroup)
  .add(AdminX402Group)
  .add(UsageGroup)
  .add(HealthGroup)
  .addError(wire(InvalidInput))
  .addError(wire(NotFound))
  .addError(wire(MethodNotAllowed))
  .addError(wire(PayloadTooLarge))
  .addError(wire(InternalError))
  .addError(wire(ServiceUnavailable))
  .annotateContext(OpenApi.annotations({
    title: "Agent Purchasing and Gateway Service",
    version: SERVICE_VERSION,
    description: "Verified data results and 947 provider endpoints for software agents, paid with prepaid credits."
  }))
{}
