import { type QueryKey, useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import type { Effect } from "effect"
import { createContext, useContext } from "react"
import { apiWithToken, type Client } from "../../api/client.js"

/** The administrator's session, held in the page's memory only (a reload signs out). */
export const AdminSession = createContext<{ readonly token: string; readonly email: string } | null>(null)

const useToken = () => {
  const session = useContext(AdminSession)
  if (session === null) throw new Error("Administrator pages need a session")
  return session.token
}

export const useAdminQuery = <A, E>(key: QueryKey, call: (client: Client) => Effect.Effect<A, E>) => {
  const token = useToken()
  return useQuery({ queryKey: ["admin", ...key], queryFn: () => apiWithToken(token, call) })
}

export const useAdminMutation = <V, A, E>(
  call: (client: Client, variables: V) => Effect.Effect<A, E>,
  invalidates: ReadonlyArray<QueryKey>
) => {
  const token = useToken()
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (variables: V) => apiWithToken(token, (client) => call(client, variables)),
    onSuccess: () =>
      Promise.all(invalidates.map((key) => queryClient.invalidateQueries({ queryKey: ["admin", ...key] })))
  })
}
