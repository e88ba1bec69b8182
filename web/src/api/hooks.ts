import { type QueryKey, useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import type { Effect } from "effect"
import { useState } from "react"
import { api, type Client } from "./client.js"

/** A read through the typed client, cached under `key`. */
export const useApiQuery = <A, E>(
  key: QueryKey,
  call: (client: Client) => Effect.Effect<A, E>,
  options: {
    readonly refetchInterval?: number | false | ((data: A | undefined) => number | false)
    readonly enabled?: boolean
    /** Run `call` once per key and keep its answer (a one-time step a page takes on arrival). */
    readonly once?: boolean
  } = {}
) =>
  useQuery({
    queryKey: key,
    queryFn: () => api(call),
    enabled: options.enabled ?? true,
    refetchInterval: typeof options.refetchInterval === "function"
      ? (query) => (options.refetchInterval as (data: A | undefined) => number | false)(query.state.data)
      : options.refetchInterval ?? false,
    ...(options.once === true
      ? {
        staleTime: Infinity,
        gcTime: Infinity,
        retry: false,
        refetchOnMount: false,
        refetchOnWindowFocus: false,
        refetchOnReconnect: false
      }
      : {})
  })

/** A change through the typed client; the reads under `invalidates` are fetched again after it. */
export const useApiMutation = <V, A, E>(
  call: (client: Client, variables: V) => Effect.Effect<A, E>,
  invalidates: ReadonlyArray<QueryKey> = []
) => {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (variables: V) => api((client) => call(client, variables)),
    onSuccess: () => Promise.all(invalidates.map((queryKey) => queryClient.invalidateQueries({ queryKey })))
  })
}

/** Cursor pages (`starting_after`): the cursors seen so far, so Previous goes back. */
export const useCursorPages = <Id extends string = string>() => {
  const [cursors, setCursors] = useState<ReadonlyArray<Id>>([])
  return {
    after: cursors.at(-1),
    page: cursors.length + 1,
    next: (lastId: Id) => setCursors((seen) => [...seen, lastId]),
    previous: () => setCursors((seen) => seen.slice(0, -1)),
    reset: () => setCursors([])
  }
}
