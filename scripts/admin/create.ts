import { Console, Effect } from "effect"
import { Schema } from "effect"
import { createInterface } from "node:readline"
import { Writable } from "node:stream"
import { EmailAddress } from "../../src/Domain/Email.js"
import { Admins } from "../../src/Services/Auth/Admins.js"
import { MIN_ADMIN_PASSWORD_LENGTH } from "../../src/Services/Auth/Passwords.js"
import { type AdminCommand, CommandError, requiredOption } from "./command.js"

/**
 * `create --email <address>`: makes an administrator. The password comes from
 * ADMIN_PASSWORD, or standard input (first line), or a prompt that does not echo; it is
 * never taken from the command line, where shells and process lists would keep it.
 * Prints the TOTP secret once.
 */
const readPassword = Effect.async<string>((resume) => {
  if (process.env["ADMIN_PASSWORD"]) return resume(Effect.succeed(process.env["ADMIN_PASSWORD"]))
  const interactive = process.stdin.isTTY === true
  let muted = false
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stdout.write(chunk)
      done()
    }
  })
  const rl = createInterface({ input: process.stdin, output: interactive ? output : undefined, terminal: interactive })
  if (interactive) {
    process.stdout.write(`Password (at least ${MIN_ADMIN_PASSWORD_LENGTH} characters): `)
    muted = true
  }
  let answered = false
  rl.once("line", (line) => {
    answered = true
    rl.close()
    if (interactive) process.stdout.write("\n")
    resume(Effect.succeed(line))
  })
  rl.once("close", () => {
    if (!answered) resume(Effect.succeed(""))
  })
})

export const create: AdminCommand = {
  summary: "Create an administrator and print its TOTP secret (once)",
  usage: "create --email <address>   (password from ADMIN_PASSWORD, standard input or a prompt)",
  run: (args) =>
    Effect.gen(function*() {
      const email = yield* requiredOption(args, "email")
      if (!Schema.is(EmailAddress)(email)) return yield* Effect.fail(new CommandError(`Not an email address: ${email}`))
      const password = yield* readPassword
      const admins = yield* Admins
      const created = yield* admins.create(email, password).pipe(
        Effect.catchTags({
          weak_password: (error) => Effect.fail(new CommandError(error.message)),
          conflict: (error) => Effect.fail(new CommandError(error.message))
        })
      )
      yield* Console.log(`Administrator created: ${created.email} (${created.id})`)
      yield* Console.log("")
      yield* Console.log("TOTP secret (shown only now; add it to an authenticator app, SHA-1, 6 digits, 30 s):")
      yield* Console.log(`  ${created.totpSecret}`)
      yield* Console.log(`  ${created.otpauthUri}`)
      yield* Console.log("")
      yield* Console.log("Sign in with POST /admin/sign-in {email, password, code}.")
    }).pipe(Effect.provide(Admins.Default))
}
