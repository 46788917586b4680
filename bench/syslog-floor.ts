// The floor of bench/syslog.sh: a plain Bun TCP server that reads the same framing (octet counting or LF lines, per
// message) and writes the same rows (ts, tag, src, data) into SQLite with the same durability as Quarry's store (WAL,
// synchronous=NORMAL, one transaction per batch), reading each message's RFC 5424 time with Date.parse. Nothing
// else: no batching across chunks, no limits, no metrics. `GET /count` answers the rows stored.
//   bun bench/syslog-floor.ts <sqlite file>   prints `{"syslog": <port>, "http": <port>}` once listening
import { Database } from 'bun:sqlite'

const db = new Database(process.argv[2]!, { create: true })
db.run('PRAGMA journal_mode = WAL')
db.run('PRAGMA synchronous = NORMAL')
db.run('CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, tag_id INTEGER NOT NULL, src TEXT NOT NULL, data BLOB NOT NULL)')
db.run('CREATE INDEX IF NOT EXISTS entries_time_tag ON entries (ts, tag_id)')
const insert = db.query('INSERT INTO entries (ts, tag_id, src, data) VALUES (?, ?, ?, ?)')
let stored = (db.query('SELECT count(*) AS n FROM entries').get() as { n: number }).n
const store = db.transaction((rows: [number, string, Uint8Array][]) => {
  for (const [ts, src, data] of rows) insert.run(ts, 1, src, data)
})

function timeOf(m: Uint8Array, now: number): number {
  // `<PRI>1 TIMESTAMP ...`
  const gt = m.indexOf(0x3e)
  const start = gt + 3
  const end = m.indexOf(0x20, start)
  const t = Date.parse(Buffer.from(m.buffer, m.byteOffset + start, end - start).toString('latin1'))
  return Number.isNaN(t) ? now : t
}

interface Conn {
  rest: Buffer | undefined
  src: string
}

const server = Bun.listen<Conn>({
  hostname: '127.0.0.1',
  port: 0,
  socket: {
    open(s) {
      s.data = { rest: undefined, src: s.remoteAddress }
    },
    data(s, chunk) {
      const b = s.data.rest ? Buffer.concat([s.data.rest, chunk]) : Buffer.from(chunk)
      s.data.rest = undefined
      const now = Date.now()
      const rows: [number, string, Uint8Array][] = []
      let i = 0
      while (i < b.length) {
        const c = b[i]!
        if (c === 0x0a) {
          i++
          continue
        }
        if (c >= 0x30 && c <= 0x39) {
          const sp = b.indexOf(0x20, i)
          if (sp > i && sp - i <= 9 && /^\d+$/.test(b.toString('latin1', i, sp))) {
            const len = Number(b.toString('latin1', i, sp))
            if (sp + 1 + len > b.length) break
            const m = b.slice(sp + 1, sp + 1 + len)
            rows.push([timeOf(m, now), s.data.src, m])
            i = sp + 1 + len
            continue
          }
        }
        const lf = b.indexOf(0x0a, i)
        if (lf < 0) break
        const m = b.slice(i, lf)
        rows.push([timeOf(m, now), s.data.src, m])
        i = lf + 1
      }
      if (i < b.length) s.data.rest = b.slice(i)
      store(rows)
      stored += rows.length
    },
  },
})

const http = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(String(stored)) })
console.log(JSON.stringify({ syslog: server.port, http: http.port }))
