// What every list view shares: a loading line, the API's refusal with a way to try again, an empty line, then the
// content; and small formatting helpers for the wire's times and sizes.
import type { ComponentChildren } from 'preact'
import type { Loaded } from './async'
import { ErrorNote } from './error'

export function LoadView<T>({ loaded, empty, isEmpty, children }: { loaded: Loaded<T>; empty: string; isEmpty?: (value: T) => boolean; children: (value: T) => ComponentChildren }) {
  const { value, error, loading, reload } = loaded
  if (error !== undefined)
    return (
      <div class="stack">
        <ErrorNote error={error} />
        <button type="button" onClick={reload}>
          Try again
        </button>
      </div>
    )
  if (value === undefined)
    return loading ? (
      <p role="status" class="muted">
        Loading…
      </p>
    ) : null
  const none = isEmpty ? isEmpty(value) : Array.isArray(value) && value.length === 0
  if (none) return <p class="muted">{empty}</p>
  return <>{children(value)}</>
}

const ZERO_TIME = /^0001-01-01/

/** A wire time for a person; the zero time (unset) reads as `unset`. */
export function when(time: string | undefined, unset = 'never'): string {
  if (!time || ZERO_TIME.test(time)) return unset
  const d = new Date(time)
  return Number.isNaN(d.getTime()) ? time : d.toLocaleString()
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`
}
