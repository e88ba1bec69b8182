import { bearer } from "../../support/fixtures.js"
import { request } from "../../support/server.js"

/** Calls to the org endpoints of one server with one credential. */
export const orgApi = (baseUrl: string, orgId: string, token: string) => {
  const call = (method: string, path: string, body?: unknown) =>
    request(`${baseUrl}/v1/orgs/${orgId}${path}`, { method, headers: bearer(token), body })
  return {
    createWebhook: (body: unknown) => call("POST", "/webhooks", body),
    listWebhooks: () => call("GET", "/webhooks"),
    deleteWebhook: (id: string) => call("DELETE", `/webhooks/${id}`),
    testWebhook: (id: string) => call("POST", `/webhooks/${id}/test`),
    deliveries: (query = "") => call("GET", `/webhook-deliveries${query}`),
    events: (query = "") => call("GET", `/events${query}`),
    notifications: () => call("GET", "/notifications"),
    setNotifications: (body: unknown) => call("PUT", "/notifications", body)
  }
}

export type OrgApi = ReturnType<typeof orgApi>
