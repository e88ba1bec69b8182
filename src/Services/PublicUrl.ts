import { Context } from "effect"

/** The public base address of the service (BASE_URL, or the listening address). */
export class PublicUrl extends Context.Tag("App/PublicUrl")<PublicUrl, string>() {}
