import { describe, expect, it } from "vitest"
import { Api } from "../../src/Http/Api.js"
import { keyCheckedAgainRoutesOf } from "../../src/Http/Middleware/Authentication.js"

/**
 * Which endpoints may take an agent key from the replica's cache is declared by the endpoints
 * themselves (`KeyCheckedAgain`), each because its first write checks the key again: the
 * middleware names no path. Only these two: a key cached for any other endpoint would let a
 * revoked key through until the cache entry expired.
 */
describe("endpoints whose writes check a cached key again", () => {
  it("are the live gateway call and the purchase in either mode, and no other", () => {
    expect(Object.fromEntries(keyCheckedAgainRoutesOf(Api))).toEqual({
      "POST /v1/call": ["live"],
      "POST /v1/execute": ["test", "live"]
    })
  })
})
