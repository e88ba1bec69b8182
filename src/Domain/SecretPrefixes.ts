/**
 * What each kind of secret begins with (see Secrets.ts). Kept apart from Secrets.ts, which
 * needs Node's crypto, so the HTTP contract, and the dashboard through it, can name them.
 */
export const secretPrefixes = {
  agentTest: "sk_test_",
  agentLive: "sk_live_",
  orgKey: "ok_",
  session: "ss_",
  webhook: "whsec_",
  /** Administrator sessions: reach the admin endpoints and nothing else. */
  adminSession: "as_",
  /** One-time sign-in link tokens (emailed). */
  signInLink: "sil_",
  /** Org invitation tokens (emailed). */
  invite: "inv_",
  /** The browser's handle on an identity-provider sign-in in flight (cookie). */
  idpHandle: "idp_"
} as const
