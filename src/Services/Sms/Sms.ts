import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Config, Context, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { NotConfigured } from "../../Errors/ApiErrors.js"

/**
 * Outgoing text messages. With TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM
 * set, messages go to a Twilio-compatible Messages API (TWILIO_API_BASE, default the
 * public Twilio API). Without them: in development each message is written to the log;
 * in production sending answers 503 `not_configured`.
 */
export class SmsError extends Error {
  readonly _tag = "SmsError"
}

export class Sms extends Context.Tag("Sms/Sms")<Sms, {
  readonly send: (to: string, body: string) => Effect.Effect<void, SmsError | NotConfigured>
}>() {}

export interface TwilioSettings {
  readonly accountSid: string
  readonly authToken: Redacted.Redacted<string>
  readonly from: string
  readonly apiBase: string
}

/** A retry or two for a provider hiccup (network error or 5xx); 4xx is final. */
const smsRetry = Schedule.exponential("250 millis").pipe(Schedule.intersect(Schedule.recurs(2)))

class RetryableSmsError extends SmsError {}

export const TwilioSms = (settings: TwilioSettings) =>
  Layer.effect(
    Sms,
    Effect.gen(function*() {
      const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerPropagation(false))
      const url = `${settings.apiBase.replace(/\/+$/, "")}/2010-04-01/Accounts/${
        encodeURIComponent(settings.accountSid)
      }/Messages.json`
      const send = (to: string, body: string) =>
        Effect.gen(function*() {
          const response = yield* client.execute(
            HttpClientRequest.post(url).pipe(
              HttpClientRequest.basicAuth(settings.accountSid, Redacted.value(settings.authToken)),
              HttpClientRequest.bodyUrlParams({ To: to, From: settings.from, Body: body })
            )
          ).pipe(
            Effect.timeout("10 seconds"),
            Effect.mapError((cause) => new RetryableSmsError(`SMS provider unreachable: ${cause._tag}`))
          )
          if (response.status >= 200 && response.status < 300) return
          // The provider's error body names the problem; it never contains the message text.
          const detail = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
          const error = `SMS provider answered ${response.status}: ${detail.slice(0, 300)}`
          return yield* Effect.fail(response.status >= 500 ? new RetryableSmsError(error) : new SmsError(error))
        }).pipe(
          Effect.scoped,
          Effect.retry({ schedule: smsRetry, while: (error) => error instanceof RetryableSmsError })
        )
      return Sms.of({ send })
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))

/** Development only: the message (code included) is a log line marked as such. */
export const DevelopmentSmsSink = Layer.succeed(
  Sms,
  Sms.of({
    send: (to, body) =>
      Effect.logInfo(`Development SMS sink (SERVICE_ENV=development, TWILIO_* unset; not sent) to ${to}: ${body}`)
  })
)

/** Production without a provider: phone verification is switched off (never a code in the log). */
export const UnconfiguredSms = Layer.succeed(
  Sms,
  Sms.of({
    send: () =>
      Effect.fail(
        new NotConfigured({
          message: "Text messages are not configured (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM)"
        })
      )
  })
)

export const SmsLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const sid = yield* Config.option(Config.string("TWILIO_ACCOUNT_SID"))
    const token = yield* Config.option(Config.redacted("TWILIO_AUTH_TOKEN"))
    const from = yield* Config.option(Config.string("TWILIO_FROM"))
    const apiBase = yield* Config.string("TWILIO_API_BASE").pipe(Config.withDefault("https://api.twilio.com"))
    const environment = yield* Config.string("SERVICE_ENV").pipe(Config.withDefault("development"))
    if (Option.isSome(sid) && Option.isSome(token) && Option.isSome(from)) {
      return TwilioSms({ accountSid: sid.value, authToken: token.value, from: from.value, apiBase })
    }
    return environment === "production" ? UnconfiguredSms : DevelopmentSmsSink
  })
)
