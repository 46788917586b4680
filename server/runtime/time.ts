// Wire times: RFC 3339 with fractional seconds in UTC; the unset time is the zero time (docs/api.md "Conventions").
// Inside the store every time is an integer of milliseconds since the epoch, 0 meaning unset.

export const ZERO_TIME = '0001-01-01T00:00:00Z'

export function formatTime(ms: number | null | undefined): string {
  return ms ? new Date(ms).toISOString() : ZERO_TIME
}

/** Accepts RFC 3339 with any offset; null, "" and absent mean unset (0). Returns undefined when unparseable. */
export function parseTime(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '' || value === ZERO_TIME) return 0
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value)) return undefined
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? undefined : ms
}
