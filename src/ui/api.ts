const TOKEN_KEY = 'forkpoint-token'

/**
 * The listener's bearer token: given once in the page's URL (`?token=`, as `forkpoint ui`
 * prints it), then kept for this tab alone and taken out of the address bar, so it is not
 * in the history or a bookmark.
 */
function listenerToken(): string | null {
  const url = new URL(location.href)
  const given = url.searchParams.get('token')
  if (given !== null) {
    sessionStorage.setItem(TOKEN_KEY, given)
    url.searchParams.delete('token')
    history.replaceState(history.state, '', url)
  }
  return sessionStorage.getItem(TOKEN_KEY)
}

const token = listenerToken()

/** The service's read-only views (`GET /v1/view/<name>`), the only requests the page makes, to the origin that served it. */
export async function view<T>(name: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value))
  const response = await fetch(`/v1/view/${name}?${query.toString()}`, { headers: { accept: 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) } })
  const body = (await response.json()) as T & { error?: { message: string } }
  if (!response.ok) throw new Error(body.error?.message ?? `${name}: HTTP ${response.status}`)
  return body
}
