// Time ranges of the search page: relative ones (`-15m`, `-7d`: that long before now) and absolute ones (RFC 3339),
// as they appear in the page's URL, and their conversion to the `datetime-local` fields (the browser's local time).

export const PRESETS: { value: string; label: string }[] = [
  { value: '-15m', label: 'Last 15 minutes' },
  { value: '-1h', label: 'Last hour' },
  { value: '-4h', label: 'Last 4 hours' },
  { value: '-24h', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-30d', label: 'Last 30 days' },
]

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** Milliseconds of a relative time (`-15m`), or undefined when it is not one. */
export function relativeMs(text: string): number | undefined {
  const m = /^-(\d{1,6})([smhdw])$/.exec(text.trim())
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : undefined
}

/** A range's bounds in milliseconds: start relative or absolute, end absolute or now; undefined when unreadable. */
export function resolveRange(start: string, end: string | undefined, now = Date.now()): { start: number; end: number } | undefined {
  const endMs = end ? Date.parse(end) : now
  if (!Number.isFinite(endMs)) return undefined
  const rel = relativeMs(start)
  const startMs = rel !== undefined ? endMs - rel : Date.parse(start)
  if (!Number.isFinite(startMs) || startMs >= endMs) return undefined
  return { start: startMs, end: endMs }
}

/** `datetime-local` text (local time, to the second) of a time. */
export function toLocalInput(ms: number): string {
  const d = new Date(ms)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
}

/** The time of `datetime-local` text (local time), as RFC 3339 in UTC; undefined when empty or unreadable. */
export function fromLocalInput(text: string): string | undefined {
  if (!text) return undefined
  const t = new Date(text).getTime()
  return Number.isFinite(t) ? new Date(t).toISOString() : undefined
}

/** How a time is shown: UTC, to the second. */
export const showTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC')
