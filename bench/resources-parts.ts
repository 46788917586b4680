// Where the time of a resource upload/download goes: the pieces of Quarry's path, each timed alone on one file.
// A diagnostic for bench/resources.sh (see bench/README.md); prints one line per piece, MB/s = 10^6 bytes/s.
//
//   bun run bench/resources-parts.ts <file> <scratch-dir> [piece ...]
//
// Pieces (default: all), each on the whole file; the file should be in the page cache (read it once first):
//   read        Bun.file().stream() drained: the floor of reading the source in Bun
//   sha1        the same, hashed with Bun.CryptoHasher('sha1') as the blob store's Meter does
//   cp          `cp` of the file into <scratch-dir> then `sync`: the copy floor of the upload goal (bench/README.md)
//   sha1-worker the file's chunks through server/blob/sha1.ts Sha1Stream (copy into 1 MiB batches, hand-off to the
//               hash worker, its backpressure): the hashing stage as the put uses it
//   mp-mem      the multipart parser alone (server/upload/multipart.ts streamFilePart) on a form built in memory around
//               the first 256 MiB of the file, repeated to the file's size, file part drained: parsing and copies,
//               no socket; prints the size of the chunks the sink gets
//   put         the disk blob store's put from Bun.file().stream() (write, SHA-1, fsync, rename): no HTTP
//   writes      the put's write loop alone: the file's bytes from memory, FileHandle.write per 128 KiB, fsync
//   writes+ds   the same with an fdatasync started every 64 MiB (as the put does), so write-back overlaps
//   get         the disk blob store's get, drained (no HTTP)
//   http-drain  curl -F upload to a bare Bun.serve that only drains request.body: Bun's HTTP body + curl
//   http-mp     the same, the body through plugins/resources/multipart.ts streamFilePart, file part drained
//   http-hash   the same, the file part through the SHA-1 only, where the blob stores run it (server/blob/sha1.ts
//               HASH_ON_WORKER): no writes; http-hash-worker, http-hash-inline: on the worker, on the JS thread
//   http-put    the same, the file part into the disk blob store (Quarry's upload without Elysia, auth, SQL);
//               http-put-worker, http-put-inline: with the SHA-1 on the worker, on the JS thread (for the rest of
//               the run: name them alternately, e.g. `http-put-worker http-put-inline http-put-worker ...`)
//   http-get    curl -o /dev/null of a bare Bun.serve answering the blob store's get stream (Quarry's download
//               without Elysia, auth, SQL)
//   http-file   curl -o /dev/null of a bare Bun.serve answering Bun.file(): Bun's own file response, for comparison
//   http-get+disk, http-file+disk   the same two, but curl -o a file in <scratch-dir> then `sync FILE`, as
//               bench/resources.sh times its downloads
// Servers listen on 127.0.0.1 port 0; curl runs as a child process; everything written goes under <scratch-dir>.
import { readdirSync, readFileSync } from 'node:fs'
import { open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createDiskBlobStore } from '../server/blob'
import { Sha1Stream } from '../server/blob/sha1'

// The multipart bridge moved from plugins/resources/ to server/upload/; take whichever this tree has.
type StreamFilePart = <T>(r: Request, sink: (s: ReadableStream<Uint8Array>) => Promise<T>, discard: (t: T) => Promise<void>, opts: { maxBytes: number }) => Promise<T>
const LIMIT = { maxBytes: 4 * 1024 ** 3 }
const { streamFilePart } = (await import('../server/upload/multipart').catch(() => import('../plugins/resources/multipart' as string))) as {
  streamFilePart: StreamFilePart
}

const [fileArg, scratchArg, ...asked] = process.argv.slice(2)
if (!fileArg || !scratchArg) {
  console.error('usage: bun run bench/resources-parts.ts <file> <scratch-dir> [piece ...]')
  process.exit(2)
}
const file: string = fileArg
const scratch: string = scratchArg
const ALL = ['read', 'sha1', 'sha1-worker', 'cp', 'mp-mem', 'put', 'writes', 'writes+ds', 'get', 'http-drain', 'http-mp', 'http-hash', 'http-hash-worker', 'http-hash-inline', 'http-put', 'http-put-worker', 'http-put-inline', 'http-get', 'http-file', 'http-get+disk', 'http-file+disk']
const pieces = asked.length ? asked : ALL
const bytes = Bun.file(file).size
const blobs = await createDiskBlobStore({ dataDir: scratch })
const KEY = 'bench/parts'
let stored = false

// Peak RSS of this process (server and pieces alike; curl is a child) over the RSS when the piece began, sampled
// every 50 ms on the event loop (so a busy loop samples less often).
let rssStart = 0
let rssPeak = 0
// CPU time of the piece (the machine is shared: wall time is noisy, CPU seconds much less so): this process's
// threads from /proc/self/task (the main JS thread apart from the others: the SHA-1 worker, Bun's HTTP and
// thread-pool threads), and curl's (a child) from its resource usage.
const TICK = 100 // USER_HZ
function threadTicks(): Map<string, number> {
  const out = new Map<string, number>()
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const comm = tid === String(process.pid) ? 'main' : readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()
      out.set(`${tid}:${comm}`, Number(f[11]) + Number(f[12]))
    } catch {}
  }
  return out
}
let cpuStart = threadTicks()
let childCpuMs = 0
function cpuNote(): string {
  const now = threadTicks()
  let main = 0
  let other = 0
  const byName = new Map<string, number>()
  for (const [k, v] of now) {
    const d = (v - (cpuStart.get(k) ?? 0)) / TICK
    if (k.endsWith(':main')) main += d
    else {
      other += d
      const name = k.slice(k.indexOf(':') + 1)
      byName.set(name, (byName.get(name) ?? 0) + d)
    }
  }
  const top = [...byName].filter(([, d]) => d >= 0.05).sort((a, b) => b[1] - a[1]).map(([n, d]) => `${n} ${d.toFixed(2)}`).join(', ')
  return `cpu main ${main.toFixed(2)} s, other threads ${other.toFixed(2)} s${top ? ` (${top})` : ''}${childCpuMs ? `, curl ${(childCpuMs / 1000).toFixed(2)} s` : ''}`
}
// Also the peak of the memory held by ArrayBuffers (most of it body pieces already used, waiting for the collector).
let abPeak = 0
setInterval(() => {
  abPeak = Math.max(abPeak, process.memoryUsage().arrayBuffers)
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
}, 50).unref()
function startPiece() {
  abPeak = 0
  cpuStart = threadTicks()
  childCpuMs = 0
  rssStart = process.memoryUsage.rss()
  rssPeak = rssStart
}
const mib = (b: number) => (b / 1048576).toFixed(1)
function report(name: string, ms: number, extra = '') {
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
  console.log(
    `${name.padEnd(14)} ${(ms / 1000).toFixed(2).padStart(6)} s ${((bytes / ms) * 1e3 / 1e6).toFixed(0).padStart(6)} MB/s   ` +
      `rss ${mib(rssStart)} MiB at start, peak +${mib(rssPeak - rssStart)} MiB (ArrayBuffers peak ${mib(abPeak)} MiB) ${extra}\n${' '.repeat(16)}${cpuNote()}`,
  )
}

/** Chunks the last drain saw, and their sizes' range. */
let drained = { chunks: 0, min: Number.POSITIVE_INFINITY, max: 0 }
async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0
  drained = { chunks: 0, min: Number.POSITIVE_INFINITY, max: 0 }
  const reader = stream.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return n
    n += value.byteLength
    drained.chunks++
    drained.min = Math.min(drained.min, value.byteLength)
    drained.max = Math.max(drained.max, value.byteLength)
  }
}
const chunkNote = () =>
  `(sink got ${drained.chunks} chunks, ${(bytes / Math.max(drained.chunks, 1) / 1024).toFixed(0)} KiB on average, ${(drained.min / 1024).toFixed(1)}–${(drained.max / 1024).toFixed(0)} KiB)`

/** A multipart body in memory: the file part holds `bytes` bytes (the first 256 MiB of the file, repeated). */
async function memoryForm(): Promise<Request> {
  const boundary = '----quarrybench7f3a'
  const head = new TextEncoder().encode(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="f.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`)
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`)
  const src = new Uint8Array(await Bun.file(file).slice(0, 256 * 1048576).arrayBuffer())
  const PIECE = 64 * 1024 // about what Bun's HTTP body hands over per chunk
  let at = -1
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (at === -1) return void (c.enqueue(head), (at = 0))
      if (at >= bytes) return void (c.enqueue(tail), c.close())
      const from = at % src.byteLength
      const n = Math.min(PIECE, src.byteLength - from, bytes - at)
      c.enqueue(src.subarray(from, from + n))
      at += n
    },
  }, { highWaterMark: 0 })
  return new Request('http://local/mp', { method: 'PUT', body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } })
}

/** Writes `bytes` bytes (the first 16 MiB of the file, repeated) with FileHandle.write and fsyncs; answers the
 *  seconds spent in the final fsync. With `every`, an fdatasync is started every `every` bytes, one at a time. */
async function writeLoop(every = Number.POSITIVE_INFINITY): Promise<number> {
  const CHUNK = 128 * 1024
  const src = new Uint8Array(await Bun.file(file).slice(0, 16 * 1048576).arrayBuffer())
  const fh = await open(join(scratch, 'writes.bin'), 'wx', 0o600)
  let syncing: Promise<void> | undefined
  let unsynced = 0
  for (let at = 0; at < bytes; at += CHUNK) {
    const from = at % src.byteLength
    await fh.write(src.subarray(from, Math.min(from + CHUNK, src.byteLength, from + bytes - at)))
    unsynced += CHUNK
    if (unsynced >= every && !syncing) {
      unsynced = 0
      syncing = fh.datasync().then(() => void (syncing = undefined))
    }
  }
  await syncing
  const t = performance.now()
  await fh.sync()
  const syncMs = performance.now() - t
  await fh.close()
  await rm(join(scratch, 'writes.bin'))
  return syncMs / 1000
}

async function ensureStored() {
  if (stored) return
  await blobs.put(KEY, Bun.file(file).stream())
  stored = true
}

async function run(cmd: string[]) {
  const p = Bun.spawn(cmd, { stdout: 'inherit', stderr: 'inherit' })
  const timer = setTimeout(() => p.kill(), 600_000)
  const code = await p.exited
  clearTimeout(timer)
  const ru = p.resourceUsage()
  if (ru) childCpuMs += Number(ru.cpuTime.user + ru.cpuTime.system) / 1000
  if (code !== 0) throw new Error(`${cmd[0]} exited with ${code}`)
}

/** Times curl; with `toDisk` it writes into <scratch-dir> and the time includes `sync FILE`. */
async function curl(args: string[], toDisk = false): Promise<number> {
  const out = toDisk ? join(scratch, 'download.bin') : '/dev/null'
  const t0 = performance.now()
  await run(['curl', '-sS', '-o', out, '-H', 'Expect:', ...args])
  if (toDisk) await run(['sync', out])
  const ms = performance.now() - t0
  if (toDisk) await rm(out, { force: true })
  return ms
}

let chunks = 0
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  maxRequestBodySize: 4 * 1024 * 1024 * 1024,
  async fetch(req) {
    const path = new URL(req.url).pathname
    if (path === '/drain') {
      let n = 0
      chunks = 0
      for await (const c of req.body!) {
        n += c.byteLength
        chunks++
      }
      return Response.json({ n })
    }
    if (path === '/mp') {
      const n = await streamFilePart(req, drain, async () => {}, LIMIT)
      return Response.json({ n })
    }
    if (path === '/put') {
      const r = await streamFilePart(req, (s) => blobs.put('bench/http-put', s), () => blobs.delete('bench/http-put'), LIMIT)
      await blobs.delete('bench/http-put')
      return Response.json(r)
    }
    if (path === '/hash' || path === '/hash-worker' || path === '/hash-inline') {
      // The file part through the SHA-1 as the blob stores' Meter runs it (where it runs by default, or forced onto
      // the worker or the JS thread), and nothing else.
      const worker = path === '/hash' ? undefined : path === '/hash-worker'
      const r = await streamFilePart(
        req,
        async (s) => {
          const h = new Sha1Stream({ worker })
          let n = 0
          const reader = s.getReader()
          for (;;) {
            const { done, value } = await reader.read()
            if (done) return { size: n, sha1: await h.digest() }
            n += value.byteLength
            const wait = h.update(value)
            if (wait) await wait
          }
        },
        async () => {},
        LIMIT,
      )
      return Response.json(r)
    }
    if (path === '/get') return new Response(await blobs.get(KEY), { headers: { 'content-length': String(bytes) } })
    if (path === '/file') return new Response(Bun.file(file))
    return new Response('no', { status: 404 })
  },
})
const base = `http://127.0.0.1:${server.port}`
const upload = (path: string) => curl(['-X', 'PUT', '-F', `file=@${file};type=application/octet-stream`, `${base}${path}`])

try {
  for (const piece of pieces) {
    Bun.gc(true)
    startPiece()
    let t0 = performance.now()
    switch (piece) {
      case 'read':
        await drain(Bun.file(file).stream())
        report(piece, performance.now() - t0)
        break
      case 'sha1': {
        const h = new Bun.CryptoHasher('sha1')
        const reader = Bun.file(file).stream().getReader()
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          h.update(value)
        }
        h.digest('base64')
        report(piece, performance.now() - t0)
        break
      }
      case 'sha1-worker': {
        const h = new Sha1Stream()
        const reader = Bun.file(file).stream().getReader()
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          const wait = h.update(value)
          if (wait) await wait
        }
        await h.digest()
        report(piece, performance.now() - t0)
        break
      }
      case 'cp': {
        const out = join(scratch, 'cp.bin')
        await run(['cp', file, out])
        await run(['sync', out])
        report(piece, performance.now() - t0)
        await rm(out, { force: true })
        break
      }
      case 'mp-mem': {
        const req = await memoryForm()
        Bun.gc(true)
        startPiece()
        t0 = performance.now()
        await streamFilePart(req, drain, async () => {}, LIMIT)
        report(piece, performance.now() - t0, chunkNote())
        break
      }
      case 'put':
        await blobs.put(KEY, Bun.file(file).stream())
        stored = true
        report(piece, performance.now() - t0)
        break
      case 'writes':
      case 'writes+ds': {
        const syncS = await writeLoop(piece === 'writes' ? undefined : 64 * 1024 * 1024)
        report(piece, performance.now() - t0, `(final fsync ${syncS.toFixed(2)} s)`)
        break
      }
      case 'get':
        await ensureStored()
        Bun.gc(true)
        startPiece()
        t0 = performance.now()
        await drain(await blobs.get(KEY))
        report(piece, performance.now() - t0)
        break
      case 'http-drain':
        report(piece, await upload('/drain'), `(${chunks} body chunks, ${(bytes / Math.max(chunks, 1) / 1024).toFixed(0)} KiB each)`)
        break
      case 'http-mp':
        report(piece, await upload('/mp'), chunkNote())
        break
      case 'http-hash':
      case 'http-hash-worker':
      case 'http-hash-inline':
        report(piece, await upload(`/${piece.slice(5)}`))
        break
      case 'http-put':
      case 'http-put-worker':
      case 'http-put-inline':
        if (piece !== 'http-put') {
          // Trees without the choice (before the upload-hash choice) always hash on the worker.
          const { setHashOnWorker } = (await import('../server/blob/sha1')) as { setHashOnWorker?: (w: boolean) => void }
          if (!setHashOnWorker && piece === 'http-put-inline') throw new Error('this tree has no inline SHA-1')
          setHashOnWorker?.(piece === 'http-put-worker')
        }
        report(piece, await upload('/put'))
        break
      case 'http-get':
        await ensureStored()
        startPiece()
        report(piece, await curl([`${base}/get`]))
        break
      case 'http-file':
        report(piece, await curl([`${base}/file`]))
        break
      case 'http-get+disk':
        await ensureStored()
        startPiece()
        report(piece, await curl([`${base}/get`], true))
        break
      case 'http-file+disk':
        report(piece, await curl([`${base}/file`], true))
        break
      default:
        throw new Error(`unknown piece ${piece} (one of ${ALL.join(' ')})`)
    }
  }
} finally {
  server.stop(true)
  await rm(join(scratch, 'blobs'), { recursive: true, force: true })
}
