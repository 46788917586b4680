// Cost of finding each line's timestamp (server/ingest/timestamps.ts), in process: it runs on every line ingested.
//
//   bun run bench/ingest-timestamps.ts [lines] [rounds]      (defaults: 200000 lines, 5 rounds)
//
// For each kind of line (nginx access, syslog, dpkg, JSON with a time field, a 4 KiB line without any timestamp, the
// worst case: every position a candidate), lines of that kind with varying times go through TimestampFinder.find,
// as strings and as the UTF-8 bytes the lines route hands it; the median round is printed in lines/s and MB/s.
import { TimestampFinder } from '../server/ingest/timestamps'

const count = Number(process.argv[2] ?? 200_000)
const rounds = Number(process.argv[3] ?? 5)
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const p2 = (n: number) => String(n).padStart(2, '0')

const KINDS: Record<string, (d: Date, i: number) => string> = {
  nginx: (d, i) =>
    `10.${i % 250}.${(i >> 8) % 250}.7 - - [${p2(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} +0000] "GET /api/items/${i} HTTP/1.1" 200 ${i % 9000} "-" "Mozilla/5.0 (X11; Linux x86_64)"`,
  syslog: (d, i) =>
    `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} web01 sshd[${i % 65536}]: Accepted publickey for alice from 10.1.2.3 port ${i % 65536} ssh2`,
  dpkg: (d, i) => `${d.toISOString().slice(0, 19).replace('T', ' ')} status installed libpkg${i % 1000}:amd64 2.36-9+deb12u4`,
  json: (d, i) => `{"level":"info","logger":"api","msg":"request ${i} served","status":200,"time":"${d.toISOString()}"}`,
  none4k: (_d, i) => `no timestamp here, entry ${i} `.padEnd(4096, 'lorem ipsum dolor sit amet '),
  worst: () => '1-'.repeat(2048),
}

const finder = new TimestampFinder()
const encoder = new TextEncoder()
const start = Date.parse('2026-01-01T00:00:00Z')
console.log(`${count} lines per kind, median of ${rounds} rounds`)
console.log('kind      input   lines/s      MB/s   found')
for (const [kind, make] of Object.entries(KINDS)) {
  const lines = Array.from({ length: count }, (_, i) => make(new Date(start + i * 1537), i))
  const bytes = lines.map((l) => encoder.encode(l))
  const size = bytes.reduce((a, b) => a + b.byteLength, 0)
  for (const [input, items] of [
    ['string', lines],
    ['bytes', bytes],
  ] as const) {
    const times: number[] = []
    let found = 0
    for (let r = 0; r < rounds; r++) {
      found = 0
      const t0 = performance.now()
      for (const item of items) if (finder.find(item, start) !== undefined) found++
      times.push(performance.now() - t0)
    }
    const ms = times.sort((a, b) => a - b)[Math.floor(rounds / 2)]!
    const perSecond = (count / ms) * 1000
    console.log(`${kind.padEnd(9)} ${input.padEnd(6)} ${Math.round(perSecond).toLocaleString('en').padStart(10)} ${((size / ms) * 1000 / 1e6).toFixed(1).padStart(9)}   ${found}`)
  }
}
