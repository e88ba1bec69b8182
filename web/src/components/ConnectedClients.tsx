import type { AgentId, OAuthConnectionId, OrgId } from "@agent-gateway/contract/Domain/Ids.js"
import { useApiMutation, useApiQuery } from "../api/hooks.js"
import { ConfirmButton } from "./ConfirmButton.js"
import { Table } from "./PagedTable.js"
import { ErrorNotice, Loaded, When } from "./ui.js"

/**
 * The MCP clients an owner connected to an agent by OAuth (sign-in from the client, then
 * consent): who connected each, when it last reached /mcp, and Disconnect, which ends its
 * tokens at once.
 */
export const ConnectedClients = ({ agentId, agentName, orgId }: {
  readonly orgId: OrgId
  readonly agentId: AgentId
  readonly agentName: string
}) => {
  const key = ["connections", orgId, agentId]
  const connections = useApiQuery(key, (c) => c.agentConnections.list({ path: { orgId, agentId } }))
  const revoke = useApiMutation(
    (c, connectionId: OAuthConnectionId) => c.agentConnections.revoke({ path: { orgId, agentId, connectionId } }),
    [key]
  )
  return (
    <details className="connected-clients" data-testid={`connections-${agentName}`}>
      <summary>Connected MCP clients</summary>
      <Loaded query={connections}>
        {(data) => (
          <Table
            rows={data.connections.filter((connection) => connection.revoked_at === null)}
            empty="No MCP client signed in as this agent. Point a client at /mcp and sign in to connect one."
            head={["Client", "Connected by", "Connected", "Last used", ""]}
            label={`MCP clients of ${agentName}`}
            row={(connection) => (
              <tr key={connection.id}>
                <td>{connection.client_name ?? connection.client_id}</td>
                <td>{connection.user_email}</td>
                <td>
                  <When at={connection.created_at} />
                </td>
                <td>
                  <When at={connection.last_used_at} />
                </td>
                <td>
                  <ConfirmButton
                    className="danger"
                    question={`Disconnect ${
                      connection.client_name ?? "this client"
                    } from ${agentName}? Its tokens stop at once.`}
                    confirmLabel="Disconnect"
                    onConfirm={() => revoke.mutate(connection.id)}
                  >
                    Disconnect
                  </ConfirmButton>
                </td>
              </tr>
            )}
          />
        )}
      </Loaded>
      <ErrorNotice error={revoke.error} />
    </details>
  )
}
