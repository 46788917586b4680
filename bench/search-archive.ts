// Throughput and memory of the search archive (server/search/archive.ts), in process, no HTTP: see bench/README.md.
//
//   bun run bench/search-archive.ts [records] [rounds]      (defaults: 500000 records of ~250 bytes, 3 rounds)
//
// Each round times, on the same lazily generated syslog-like records (~250 bytes each, see records()):
//   ndjson          JSON.stringify of every record, nothing else: the floor of producing the records
//   gzip-only       the NDJSON through node:zlib createGzip at the writer's level, drained: the floor of writing
//   write Ln        writeSearchArchive(...) drained, gzip level n (the default, 1, and 6)
//   read            readSearchArchive over the archive (in memory) with an onRecord that only counts
//   gunzip-only     the same archive through createGunzip, drained: the floor of reading
//   round trip      writer piped straight into reader (the export → import shape), with peak RSS growth
// and, once, a zip bomb of valid records: 2 GiB of 1 KB lines in one results member (a few MiB of gzip, cut off
// after the bomb's first 2 GiB, never reached) against maxExpandedBytes 1 GiB: time to refuse, compressed bytes
// read, peak RSS growth (a bomb of zeros is refused after a few MiB whatever the limits: see the tests).
// Medians of the rounds are printed; MB/s = 10^6 bytes of NDJSON per second.
import { randomBytes } from 'node:crypto'
import zlib from 'node:zlib'
import tar from 'tar-stream'
import { ArchiveError, DEFAULT_GZIP_LEVEL, readSearchArchive, writeSearchArchive } from '../server/search/archive'

const count = Number(process.argv[2] ?? 500_000)
const rounds = Number(process.argv[3] ?? 3)
const NOISE = randomBytes(1024 * 1024)
const description = {
  UserQuery: 'tag=syslog grep error',
  EffectiveQuery: 'tag=syslog grep error | table',
  StartRange: '2024-05-01T00:00:00Z',
  EndRange: '2024-05-02T00:00:00Z',
  Started: '2024-05-02T10:00:00Z',
  Finished: '2024-05-02T10:00:03Z',
}

// Syslog-like records: timestamps, addresses, process ids, hex ids and a message of common words. The messages
// repeat every 4096 records (~800 KB), far beyond deflate's 32 KiB window, so gzip sees them as fresh text.
const WORDS = 'error warning connection timeout user login failed accepted session opened closed for from port ssh2 kernel eth0 link up down disk full cron job started'.split(' ')
const MESSAGES = Array.from({ length: 4096 }, (_, i) =>
  Array.from({ length: 6 + ((i * 7) % 10) }, (_, j) => WORDS[(i * 31 + j * 17 + ((i * j) % 13)) % WORDS.length]).join(' '),
)
const T0 = Date.parse('2024-05-01T00:00:00Z')
function* records() {
  for (let i = 0; i < count; i++) {
    yield {
      TS: new Date(T0 + i * 137).toISOString(),
      Tag: 'syslog',
      Src: `10.0.${i % 251}.${(i * 7) % 253}`,
      Seq: i,
      Data: `<34>May  1 host${i % 50} sshd[${(i * 7919) % 65535}]: ${MESSAGES[i % 4096]} id=${((i * 2654435761) >>> 0).toString(16)} ${NOISE.toString('hex', i % 1000, (i % 1000) + 8)}`,
    }
  }
}

let ndjsonBytes = 0
for (const r of records()) ndjsonBytes += Buffer.byteLength(JSON.stringify(r)) + 1

async function drain(stream: ReadableStream<Uint8Array>) {
  let n = 0
  for await (const chunk of stream) n += chunk.byteLength
  return n
}

/** Peak RSS over a run, sampled every 20 ms, minus RSS at its start. */
async function withRss<T>(run: () => Promise<T>): Promise<[T, number]> {
  Bun.gc(true)
  const base = process.memoryUsage().rss
  let peak = base
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20)
  try {
    const result = await run()
    peak = Math.max(peak, process.memoryUsage().rss)
    return [result, peak - base]
  } finally {
    clearInterval(timer)
  }
}

const times = new Map<string, number[]>()
async function timed<T>(name: string, run: () => Promise<T>): Promise<T> {
  const start = performance.now()
  const result = await run()
  const list = times.get(name) ?? []
  list.push((performance.now() - start) / 1000)
  times.set(name, list)
  return result
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

let archive = new Uint8Array(0)
let sizeL6 = 0
const rss: number[] = []
for (let round = 0; round < rounds; round++) {
  await timed('ndjson', async () => {
    for (const r of records()) JSON.stringify(r)
  })
  await timed(`gzip-only L${DEFAULT_GZIP_LEVEL}`, async () => {
    const gzip = zlib.createGzip({ level: DEFAULT_GZIP_LEVEL })
    const done = (async () => {
      for await (const _ of gzip);
    })()
    // Written in batches of about 1 MiB, as the writer hands gzip its chunks (a write per record costs far more).
    let batch: string[] = []
    let size = 0
    const flush = async () => {
      if (!gzip.write(batch.join(''))) await new Promise((ok) => gzip.once('drain', ok))
      batch = []
      size = 0
    }
    for (const r of records()) {
      const line = `${JSON.stringify(r)}\n`
      batch.push(line)
      size += line.length
      if (size >= 1024 * 1024) await flush()
    }
    await flush()
    gzip.end()
    await done
  })
  sizeL6 = await timed('write L6', () => drain(writeSearchArchive(description, records(), { level: 6 })))
  archive = await timed(`write L${DEFAULT_GZIP_LEVEL} (default)`, async () => new Uint8Array(await new Response(writeSearchArchive(description, records())).arrayBuffer()))
  let seen = 0
  await timed('read', () => readSearchArchive(new Blob([archive]).stream(), {}, async () => void seen++))
  if (seen !== count) throw new Error(`read ${seen} records of ${count}`)
  await timed('gunzip-only', () => drain(new Blob([archive]).stream().pipeThrough(new DecompressionStream('gzip'))))
  const [, growth] = await withRss(() =>
    timed('round trip', () => readSearchArchive(writeSearchArchive(description, records()), {}, async () => {})),
  )
  rss.push(growth)
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1)
console.log(`search archive: ${count} records, ${mb(ndjsonBytes)} MB of NDJSON, archive ${mb(archive.byteLength)} MB at level ${DEFAULT_GZIP_LEVEL} (default), ${mb(sizeL6)} MB at level 6; ${rounds} rounds, medians; Bun ${Bun.version}; load ${(await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')}`)
console.log('| step | seconds | MB/s of NDJSON | records/s |\n| --- | ---: | ---: | ---: |')
for (const [name, list] of times) {
  const s = median(list)
  console.log(`| ${name} | ${s.toFixed(2)} | ${(ndjsonBytes / 1e6 / s).toFixed(0)} | ${Math.round(count / s)} |`)
}
console.log(`round trip peak RSS growth: median ${mb(median(rss))} MB (rounds: ${rss.map(mb).join(', ')})`)

// The zip bomb: search.json, then a results member declaring 2 GiB, filled with one 1 MiB block of valid record
// lines deflated once (full flush, so the piece stands alone) and repeated.
const tarBytes = async (name: string, body: Uint8Array) => {
  const pack = tar.pack()
  const parts: Buffer[] = []
  const reading = (async () => {
    for await (const part of pack) parts.push(part as Buffer)
  })()
  await new Promise<void>((resolve, reject) =>
    pack.entry({ name, size: body.byteLength, mtime: new Date(0) }, Buffer.from(body), (e) => (e ? reject(e) : resolve())),
  )
  pack.push(null) // no end-of-archive blocks: more follows
  await reading
  return Buffer.concat(parts)
}
const line = `${JSON.stringify({ Data: 'b'.repeat(1000) })}\n`
const block = Buffer.from(line.repeat(Math.floor((1024 * 1024) / line.length)))
const copies = Math.ceil((2 * 1024 ** 3) / block.byteLength)
const head = await tarBytes('search.json', Buffer.from(JSON.stringify({ Format: 'quarry-search-archive', Version: 1, ...description })))
const chunkHeader = (await tarBytes('results/000001.ndjson', Buffer.alloc(0))).subarray(0, 512)
chunkHeader.write(`${(block.byteLength * copies).toString(8).padStart(11, '0')}\0`, 124, 'latin1')
chunkHeader.fill(' ', 148, 156)
chunkHeader.write(`${chunkHeader.reduce((sum, byte) => sum + byte, 0).toString(8).padStart(6, '0')}\0 `, 148, 'latin1')
const flush = { finishFlush: zlib.constants.Z_FULL_FLUSH }
const piece = zlib.deflateRawSync(block, flush)
const bomb = Buffer.concat([
  Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]),
  zlib.deflateRawSync(Buffer.concat([head, chunkHeader]), flush),
  ...Array.from({ length: copies }, () => piece),
])
let pulled = 0
let offset = 0
const source = new ReadableStream<Uint8Array>(
  {
    pull(controller) {
      if (offset >= bomb.byteLength) return controller.close()
      const chunk = bomb.subarray(offset, offset + 64 * 1024)
      offset += chunk.byteLength
      pulled += chunk.byteLength
      controller.enqueue(chunk)
    },
  },
  { highWaterMark: 0 },
)
const start = performance.now()
let bombRecords = 0
const [refusal, bombRss] = await withRss(() =>
  readSearchArchive(source, { maxExpandedBytes: 1024 ** 3 }, async () => void bombRecords++).catch((e) => e),
)
if (!(refusal instanceof ArchiveError)) throw new Error(`the bomb was not refused: ${refusal}`)
console.log(
  `zip bomb (${mb(bomb.byteLength)} MB of gzip → 2 GiB of records) against maxExpandedBytes 1 GiB: refused in ${((performance.now() - start) / 1000).toFixed(2)} s after reading ${mb(pulled)} MB and handing ${bombRecords} records to onRecord, peak RSS growth ${mb(bombRss)} MB: "${refusal.message}"`,
)
