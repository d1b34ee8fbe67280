/** The service's read-only views (`GET /v1/view/<name>`), the only requests the page makes, to the origin that served it. */
export async function view<T>(name: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value))
  const response = await fetch(`/v1/view/${name}?${query.toString()}`, { headers: { accept: 'application/json' } })
  const body = (await response.json()) as T & { error?: { message: string } }
  if (!response.ok) throw new Error(body.error?.message ?? `${name}: HTTP ${response.status}`)
  return body
}
