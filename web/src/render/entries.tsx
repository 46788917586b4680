// The renderers of entries (text, raw, hex, pcap): each entry with its time, tag (its name from the answer's Tags
// map), source and data, and the values the query enumerated. Data is shown as text (text, raw: decoded as UTF-8,
// bytes that are no text replaced) or as a hex dump (hex, pcap). Everything is text, never HTML.

export interface WireEntry {
  TS: string
  Tag: number
  SRC?: string
  Data?: string
  Enumerated?: { Name: string; ValueStr: string }[]
}

export const isEntries = (v: unknown): v is WireEntry[] => Array.isArray(v) && v.every((e) => typeof e === 'object' && e !== null && 'TS' in e)

function bytesOf(base64: string): Uint8Array {
  try {
    const bin = atob(base64)
    const out = new Uint8Array(bin.length)
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
    return out
  } catch {
    return new Uint8Array(0)
  }
}

const decoder = new TextDecoder('utf-8', { fatal: false })
/** Entries' data shown as a hex dump holds at most this many bytes each (the rest is counted, not shown). */
const HEX_BYTES = 4096

export function hexDump(bytes: Uint8Array): string {
  const lines: string[] = []
  const n = Math.min(bytes.length, HEX_BYTES)
  for (let at = 0; at < n; at += 16) {
    const row = bytes.subarray(at, Math.min(n, at + 16))
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ')
    const text = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('')
    lines.push(`${at.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${text}`)
  }
  if (bytes.length > n) lines.push(`… ${bytes.length - n} more bytes`)
  return lines.join('\n')
}

/** An entry's time as the console shows times: ISO 8601 in UTC, to the millisecond. */
export const timeText = (ts: string) => {
  const t = Date.parse(ts)
  return Number.isFinite(t) ? new Date(t).toISOString().replace('T', ' ').replace('Z', ' UTC') : ts
}

export function EntriesView({ entries, tags, renderer }: { entries: WireEntry[]; tags?: Record<string, number>; renderer: string }) {
  if (entries.length === 0) return <p class="muted">No entries in this range.</p>
  const tagNames = new Map(Object.entries(tags ?? {}).map(([name, id]) => [id, name]))
  const hex = renderer === 'hex' || renderer === 'pcap'
  return (
    <ol class="entries">
      {entries.map((e, i) => {
        const bytes = bytesOf(e.Data ?? '')
        return (
          <li key={i} class="entry">
            <div class="entry-head">
              <time dateTime={e.TS}>{timeText(e.TS)}</time>
              <span class="tag">{tagNames.get(e.Tag) ?? String(e.Tag)}</span>
              {e.SRC && <span class="muted">{e.SRC}</span>}
            </div>
            <pre class="entry-data">{hex ? hexDump(bytes) : decoder.decode(bytes)}</pre>
            {e.Enumerated && e.Enumerated.length > 0 && (
              <dl class="values">
                {e.Enumerated.map((v) => (
                  <div key={v.Name}>
                    <dt>{v.Name}</dt>
                    <dd>{v.ValueStr}</dd>
                  </div>
                ))}
              </dl>
            )}
          </li>
        )
      })}
    </ol>
  )
}
