// Hash routes (`#/search?q=...`): the server serves one page at `/`, so every view is a fragment and a reload or a
// shared link opens the same view. `route` is the current path and its query; `navigate` changes it.
import { signal } from '@preact/signals'

export interface Route {
  /** The path after `#`, without its query: `/dashboards/12`. */
  path: string
  query: URLSearchParams
}

function parse(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/'
  const q = raw.indexOf('?')
  return { path: q === -1 ? raw : raw.slice(0, q), query: new URLSearchParams(q === -1 ? '' : raw.slice(q + 1)) }
}

export const route = signal<Route>(parse(location.hash))
addEventListener('hashchange', () => {
  route.value = parse(location.hash)
})

export function href(path: string, query?: Record<string, string | undefined>): string {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, v)
  const qs = params.toString()
  return `#${path}${qs ? `?${qs}` : ''}`
}

export function navigate(path: string, query?: Record<string, string | undefined>): void {
  location.hash = href(path, query)
}

/** Matches `/dashboards/:id` against a path: the parameters, or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split('/')
  const s = path.split('/')
  if (p.length !== s.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(':')) params[p[i]!.slice(1)] = decodeURIComponent(s[i]!)
    else if (p[i] !== s[i]) return undefined
  }
  return params
}
