import { expect, it } from "vitest"
import { bearer, seedOrg } from "../../support/fixtures.js"
import { request } from "../../support/server.js"
import { production } from "./world.js"

/**
 * Production without Stripe keys (the suite's production service has none): billing is off
 * and every billing endpoint says so, 503 not_configured, rather than half working.
 * Billing with Stripe is test/Billing/billing.test.ts's; the development sandbox,
 * test/Billing/sandbox.test.ts's.
 */
export const billingUnconfiguredCases = () => {
  it("answers 503 not_configured on every billing endpoint", async () => {
    const org = await seedOrg(production.db)
    const unconfigured =
      "Billing is not configured: set STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET"
    const calls: Array<[string, string, unknown, string]> = [
      ["GET", `/v1/orgs/${org.orgId}/billing`, undefined, unconfigured],
      ["GET", `/v1/orgs/${org.orgId}/billing/payments`, undefined, unconfigured],
      ["POST", `/v1/orgs/${org.orgId}/billing/top-ups`, { credits: 5000 }, unconfigured],
      ["POST", `/v1/orgs/${org.orgId}/billing/checkout`, { credits: 5000 }, unconfigured],
      ["PUT", `/v1/orgs/${org.orgId}/billing/auto-reload`, { enabled: false }, unconfigured],
      ["POST", `/v1/orgs/${org.orgId}/billing/plan`, { plan: "pro" }, unconfigured],
      [
        "POST",
        "/v1/billing/webhook",
        {},
        "Payment webhooks need Stripe (STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY, STRIPE_WEBHOOK_SECRET)"
      ],
      [
        "POST",
        "/v1/billing/sandbox/confirm",
        { client_secret: "x", card_number: "4242424242424242" },
        "The payment sandbox runs only in development without Stripe keys"
      ]
    ]
    for (const [method, path, body, message] of calls) {
      const answer = await request(`${production.server.url}${path}`, {
        method,
        headers: bearer(org.owner.sessionToken),
        body
      })
      expect(answer.status, `${method} ${path}`).toBe(503)
      expect(answer.json).toEqual({
        error: {
          code: "not_configured",
          message,
          doc_url: `${production.server.baseUrl}/docs/errors#not_configured`,
          retryable: false
        }
      })
    }
  })
}
