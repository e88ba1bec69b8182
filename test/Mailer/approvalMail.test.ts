import { describe, expect, it } from "vitest"
import { approvalRequestMail } from "../../src/Services/Mailer/ApprovalMail.js"

/** The approval mail writes money and time as the dashboard does, never as the API's raw values. */
describe("the approval mail", () => {
  const mail = approvalRequestMail({
    agentName: "Scout <1>",
    toolName: "Finder",
    itemCount: 3,
    amount: 22_500n,
    reason: "over_budget",
    approvalId: "8c5a4b1e-0000-4000-8000-000000000001",
    expiresAt: new Date("2026-11-30T14:05:09.123Z"),
    links: { approve: "https://gateway.example/a", reject: "https://gateway.example/r" }
  })

  it("gives dollars with two decimals and credits with separators", () => {
    expect(mail.subject).toBe("Approve a purchase of $22.50 by Scout <1>?")
    expect(mail.text).toContain("for up to 22,500 credits ($22.50).")
    expect(mail.html).toContain("for up to 22,500 credits ($22.50).")
    for (const raw of ["$22.500", "22500"]) {
      expect(mail.text).not.toContain(raw)
      expect(mail.html).not.toContain(raw)
    }
  })

  it("gives the expiry as a readable UTC date, not an ISO timestamp", () => {
    expect(mail.text).toContain("The request expires on 30 Nov 2026, 14:05 UTC.")
    expect(mail.text).not.toContain("2026-11-30T")
    expect(mail.html).toContain("Scout &lt;1&gt;")
  })
})
