import type { AdminCommand } from "./command.js"
import { create } from "./create.js"
import { credit } from "./credit.js"
import { gatewayCommands } from "./gateway.js"
import { orgCommands } from "./orgs.js"
import { toolCommands } from "./tools.js"
import { x402Commands } from "./x402.js"

/**
 * The subcommands of `npm run admin -- <name>`. Add a command by writing it in
 * `scripts/admin/<area>.ts` (an `AdminCommand`) and listing it here. The operator commands
 * call the same services as the /admin endpoints and name their administrator with `--admin`.
 */
export const commands: Record<string, AdminCommand> = {
  create,
  credit,
  ...toolCommands,
  ...orgCommands,
  ...gatewayCommands,
  ...x402Commands
}
