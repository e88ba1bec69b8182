/** Polls `probe` until it answers something other than undefined (or the time runs out). */
export const waitFor = async <A>(
  probe: () => A | undefined | Promise<A | undefined>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {}
): Promise<A> => {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000)
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${options.what ?? "a condition"}`)
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50))
  }
}
