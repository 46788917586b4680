// The generated logs of bench/engine.ts, deterministic by line number: access-log lines (with `host=` and `ms=` at the
// end), JSON lines and key=value lines that describe the same requests. One line in MARKER_EVERY of the access log
// holds `marker` and four hex digits (the needle of the grep and regex searches).
export const MARKER_EVERY = 1000
/** Entry i happens at T0 + i * STEP_MS (1,000,000 entries: 100 minutes, 100 windows of a minute). */
export const T0 = Date.parse('2026-01-01T00:00:00Z')
export const STEP_MS = 6
export const HOSTS = 20
/**
 * Each kind has a day of its own (access log from T0, JSON a day later, key=value two days later), as logs of
 * different sources ingested over time are: a search of one tag then reads that tag's segments only.
 */
export const KIND_OFFSET_MS = { access: 0, json: 86_400_000, kv: 2 * 86_400_000 } as const

const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE']
const STATUS = [200, 200, 200, 200, 304, 404, 500]
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const p2 = (n: number) => String(n).padStart(2, '0')

export interface Request {
  ts: number
  ip: string
  host: string
  method: string
  path: string
  status: number
  bytes: number
  ms: number
  user: string
  req: number
}

export function request(i: number, offsetMs = 0): Request {
  let x = (Math.imul(i + 1, 2654435761) ^ 0x5bd1e995) >>> 0
  const r = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 8
  return {
    ts: T0 + offsetMs + i * STEP_MS,
    ip: `10.${r() % 256}.${r() % 256}.${r() % 256}`,
    host: `web${r() % HOSTS}`,
    method: METHODS[r() % METHODS.length]!,
    path: `/api/v1/items/${r() % 10000}`,
    status: STATUS[r() % STATUS.length]!,
    bytes: r() % 50000,
    // A skewed latency: most requests fast, a tail of slow ones (so that p95 differs from the mean).
    ms: r() % 10 === 0 ? 200 + (r() % 1800) : r() % 200,
    user: `u${r() % 5000}`,
    req: i,
  }
}

export function accessLine(i: number): string {
  const q = request(i, KIND_OFFSET_MS.access)
  const d = new Date(q.ts)
  const clf = `${p2(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} +0000`
  const marker = i % MARKER_EVERY === 0 ? ` marker${((i * 40503) & 0xffff).toString(16).padStart(4, '0')}` : ''
  return `${q.ip} - - [${clf}] "${q.method} ${q.path}?page=${q.req % 50} HTTP/1.1" ${q.status} ${q.bytes} "https://example.com/" "Mozilla/5.0 (X11; Linux x86_64) bench/${q.req % 100}${marker}" host=${q.host} ms=${q.ms}`
}

export function jsonLine(i: number): string {
  const q = request(i, KIND_OFFSET_MS.json)
  return `{"ts":"${new Date(q.ts).toISOString()}","host":"${q.host}","ip":"${q.ip}","method":"${q.method}","path":"${q.path}","status":${q.status},"bytes":${q.bytes},"ms":${q.ms},"user":"${q.user}","req":${q.req}}`
}

export function kvLine(i: number): string {
  const q = request(i, KIND_OFFSET_MS.kv)
  return `ts=${new Date(q.ts).toISOString()} host=${q.host} ip=${q.ip} method=${q.method} path=${q.path} status=${q.status} bytes=${q.bytes} ms=${q.ms} user=${q.user} req=${q.req}`
}

/** The access-log pattern of the regex extraction (RE2 syntax; JavaScript's differs only in `(?P<`). */
export const ACCESS_PATTERN = '^(?P<ip>\\S+) \\S+ \\S+ \\[(?P<time>[^\\]]+)\\] "(?P<method>[A-Z]+) (?P<path>\\S+) HTTP/[0-9.]+" (?P<status>\\d{3}) (?P<bytes>\\d+)'
