import type { AdminCommand } from "./command.js"
import { create } from "./create.js"
import { credit } from "./credit.js"

/**
 * The subcommands of `npm run admin -- <name>`. Add a command by writing
 * `scripts/admin/<name>.ts` (an `AdminCommand`) and listing it here.
 */
export const commands: Record<string, AdminCommand> = {
  create,
  credit
}
