// quarry ingest: entries into the embedded engine, from files or standard input. The API stores a request's batch
// whole or not at all and bounds a request by QUARRY_MAX_BODY_SIZE, so the input is read as a stream and sent in
// batches of at most --batch-size bytes of request body (and BATCH_ENTRIES entries), one after the other: memory stays
// at one batch (and the one in flight) whatever the input, and a refusal names the file and line of the entry the
// server refused and says how many entries earlier batches stored.
// Plain lines go to POST /api/ingest/lines as they are read (bytes, cut at LF, blank lines left out): the server finds
// each line's time (docs/shippers.md "Timestamps"; --zone for times written without one, UTC by default as before,
// --timestamp-format to pin one, --no-timestamps), else stamps the time of receipt. Nothing is decoded or re-encoded
// per line here (the JSON route's base64 and per-line time made this process the bottleneck: bench/README.md).
// NDJSON entries go to POST /api/ingest/json, each object checked here.
import { isIP } from 'node:net'
import { statSync } from 'node:fs'
import { command, rest } from '../command'
import { client, output } from '../context'
import { ApiError, CliError, UsageError } from '../errors'
import { bytes } from '../output'
import { DURATION_HELP, SIZE_HELP, parseDuration, parseSize } from '../units'
import { TimestampFinder } from '../../server/ingest/timestamps'

/** The server's tag names (server/search/query.ts TAG_NAME), checked here so a bad tag is refused before anything is sent. */
const TAG_NAME = /^[A-Za-z0-9._-]{1,128}$/
/** Entries per request at most, whatever their size: keeps one request's work on the server short. */
const BATCH_ENTRIES = 5000
const DEFAULT_BATCH = '1MiB'
/**
 * How long one batch may keep being refused for a while (429: past the user's ingest rate; 503: the server is storing
 * too much at once), each time sent again after the Retry-After the refusal gives, before the command gives up
 * (--retry-for). Nothing of such a batch was stored, so sending it again cannot store anything twice.
 */
const DEFAULT_RETRY_FOR = '5m'
/** The longest single wait, whatever a Retry-After says. */
const LONGEST_WAIT_MS = 30_000

interface WireEntry { TS?: string | null; Tag: string; SRC?: string; Data: string }
interface Where { file: string; line: number }
interface Ingested { Count: number; Size: number; Tags: string[] }

/**
 * The lines of a stream, those of each chunk read at once (one step of the generator per chunk, not per line), with
 * the bytes read so far reported as they come (for the progress bar). Each chunk's lines are cut at their offsets and
 * the rest kept once per chunk (cutting the rest after every line copied a chunk's tail once per line: quadratic in
 * the lines of a chunk, most of the command's time).
 */
async function* linesOf(stream: ReadableStream<Uint8Array>, advance: (n: number) => void): AsyncGenerator<string[]> {
  const decoder = new TextDecoder()
  let pending = ''
  for await (const chunk of stream) {
    advance(chunk.byteLength)
    pending += decoder.decode(chunk, { stream: true })
    const lines: string[] = []
    let from = 0
    let nl: number
    while ((nl = pending.indexOf('\n', from)) !== -1) {
      lines.push(pending.charCodeAt(nl - 1) === 0x0d && nl > from ? pending.slice(from, nl - 1) : pending.slice(from, nl))
      from = nl + 1
    }
    pending = pending.slice(from)
    if (lines.length > 0) yield lines
  }
  pending += decoder.decode()
  if (pending !== '') yield [pending.replace(/\r$/, '')]
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')
/** A character String.prototype.trim would keep: a line without one is blank (found without trim's copy). */
const NOT_SPACE = /\S/

/**
 * Whether `bytes[from, end)`, UTF-8, holds nothing but white space (as NOT_SPACE sees it): a line starting with a
 * printable ASCII character is decided by that byte alone; any other is decoded and tested.
 */
function isBlank(bytes: Buffer, from: number, end: number): boolean {
  if (end === from) return true
  const first = bytes[from]!
  if (first > 0x20 && first < 0x7f) return false
  return !NOT_SPACE.test(bytes.toString('utf8', from, end))
}

/** One NDJSON line as a wire entry: {"TS"?, "Tag"?, "SRC"?, "Data"} with Data as text; --tag and --source fill in. */
export function ndjsonEntry(line: string, where: string, tag: string | undefined, source: string | undefined): WireEntry {
  let v: unknown
  try {
    v = JSON.parse(line)
  } catch {
    throw new CliError(`${where}: not a JSON object (--format ndjson wants one object per line)`)
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CliError(`${where}: not a JSON object (--format ndjson wants one object per line)`)
  const o = v as Record<string, unknown>
  if (typeof o.Data !== 'string') throw new CliError(`${where}: "Data" must be a string (the entry's text)`)
  if (o.TS !== undefined && o.TS !== null && typeof o.TS !== 'string') throw new CliError(`${where}: "TS" must be an RFC 3339 time`)
  const entryTag = o.Tag ?? tag
  if (entryTag === undefined) throw new CliError(`${where}: no "Tag" and no --tag`)
  if (typeof entryTag !== 'string' || !TAG_NAME.test(entryTag)) throw new CliError(`${where}: "Tag" must be 1 to 128 letters, digits, '.', '_' or '-'`)
  const src = o.SRC ?? source
  if (src !== undefined && (typeof src !== 'string' || (src !== '' && isIP(src) === 0))) throw new CliError(`${where}: "SRC" must be an IP address`)
  return { ...(o.TS != null ? { TS: o.TS as string } : {}), Tag: entryTag, ...(src ? { SRC: src as string } : {}), Data: base64(o.Data) }
}

export const ingest = command({
  name: 'ingest',
  description: 'Send entries to the server: each line of the files (or of standard input) is one entry, or one NDJSON object with --format ndjson',
  examples: [
    'quarry ingest /var/log/nginx/access.log --tag web --source 10.0.0.5',
    'journalctl -o cat | quarry ingest --tag journal',
    'quarry ingest events.ndjson --format ndjson --tag app   # {"TS": "2026-01-01T00:00:00Z", "Tag": "app", "SRC": "10.0.0.1", "Data": "text"}',
    'quarry ingest big.log --tag web --batch-size 2MB',
  ],
  args: {
    file: { type: 'positional', required: false, valueHint: 'FILE|-', description: 'Files to read, in order (default, or -: standard input); more may follow' },
    tag: { type: 'string', description: 'Tag of the entries (letters, digits, ".", "_", "-"); required unless every NDJSON entry has its own "Tag"' },
    source: { type: 'string', valueHint: 'IP', description: 'Source address (SRC) of the entries, unless an NDJSON entry has its own' },
    format: { type: 'string', valueHint: 'lines|ndjson', description: 'lines (default: each non-empty line is an entry\'s Data, its time read from the line, else now) or ndjson (objects with TS, Tag, SRC, Data as text)' },
    timestamps: { type: 'boolean', default: true, description: 'Read each line\'s time from the line (the default with --format lines); --no-timestamps: every entry gets the time it is sent' },
    'timestamp-format': { type: 'string', valueHint: 'NAME', description: 'Look only for this timestamp format (RFC3339, Apache, NGINX, Syslog, DPKG, UnixSeconds...; see docs/shippers.md)' },
    zone: { type: 'string', valueHint: 'ZONE', description: 'Zone of times written without one: an IANA name (Europe/Paris), an offset (+02:00) or local (default UTC)' },
    'batch-size': { type: 'string', valueHint: 'SIZE', description: `Request body size per batch (default ${DEFAULT_BATCH}; ${SIZE_HELP}); keep it under the server's QUARRY_MAX_BODY_SIZE` },
    'retry-for': { type: 'string', valueHint: 'DURATION', description: `How long a batch the server refuses for a while (429, 503) is sent again after the wait it names (default ${DEFAULT_RETRY_FOR}; ${DURATION_HELP})` },
  },
  variadic: true,
  async run(ctx) {
    const { args } = ctx
    const format = args.format ?? 'lines'
    if (format !== 'lines' && format !== 'ndjson') throw new UsageError(`--format: "${format}" is neither lines nor ndjson`)
    if (args.tag !== undefined && !TAG_NAME.test(args.tag)) throw new UsageError(`--tag: "${args.tag}" must be 1 to 128 letters, digits, '.', '_' or '-'`)
    if (args.tag === undefined && format === 'lines') throw new UsageError('name the tag of the entries with --tag NAME')
    if (args.source !== undefined && isIP(args.source) === 0) throw new UsageError(`--source: "${args.source}" is not an IP address`)
    const batchBytes = parseSize('--batch-size', args['batch-size'] ?? DEFAULT_BATCH)
    const retryForMs = parseDuration('--retry-for', args['retry-for'] ?? DEFAULT_RETRY_FOR)
    let zone: string | undefined
    if (format === 'lines' && args.timestamps !== false) {
      zone = args.zone === 'local' ? Intl.DateTimeFormat().resolvedOptions().timeZone : args.zone
      // Checked here, so that a bad option is refused before anything is sent (the server reads the times).
      try {
        new TimestampFinder({ zone, format: args['timestamp-format'] })
      } catch (e) {
        throw new UsageError(`${args['timestamp-format'] !== undefined && !/zone|offset/.test((e as Error).message) ? '--timestamp-format' : '--zone'}: ${(e as Error).message}`)
      }
    }
    const files = args.file === undefined ? ['-'] : [args.file, ...rest(ctx, 1)]
    if (files.filter((f) => f === '-').length > 1) throw new UsageError('standard input (-) can be read only once')
    let total: number | undefined = 0
    for (const f of files) {
      if (f === '-') {
        total = undefined
        continue
      }
      try {
        const st = statSync(f)
        if (!st.isFile()) throw new Error('not a regular file')
        if (total !== undefined) total += st.size
      } catch (e) {
        throw new CliError(`cannot read ${f}: ${(e as Error).message}`)
      }
    }

    // Read once: citty's args are a proxy that converts the name's case on every read (a tenth of the command's
    // time when read per line).
    const tag = args.tag
    const source = args.source
    const c = client()
    const out = output()
    const progress = out.progress('ingest')
    const done = { Count: 0, Size: 0, Requests: 0, Tags: new Set<string>() }
    const stored = () => (done.Count ? `; the ${done.Count} entries of earlier batches are stored` : '; nothing was stored')
    // One request in flight while the next batch is read and built (the server stores one while this process makes
    // the next): a batch is sent once the one before it is answered, so the entries stored are always the batches
    // before the first refused one, as the refusal says.
    let inflight: Promise<void> | undefined
    let failure: { error: unknown } | undefined
    const settle = async () => {
      await inflight
      inflight = undefined
      if (failure) throw failure.error
    }
    /** Sends a batch once the one before it is answered; `explain` words a refusal's message with its file and line. */
    const dispatch = async (request: () => Promise<Ingested>, explain: (message: string) => string) => {
      await settle()
      inflight = (async () => {
        try {
          const r = await sendUntilTaken(request)
          done.Count += r.Count
          done.Size += r.Size
          done.Requests++
          r.Tags.forEach((t) => done.Tags.add(t))
        } catch (e) {
          if (!(e instanceof ApiError)) throw e
          throw new ApiError(e.status, `${explain(e.message.replace(/; nothing was stored$/, ''))}${stored()}`, e.body)
        }
      })().catch((error: unknown) => {
        failure = { error }
      })
    }
    /** Whether the note that the server slows this ingest down was written (once per command). */
    let told = false
    /**
     * The request's answer, sent again after each refusal for a while (--retry-for) as long as the server says when to
     * come back: a sender faster than the server's rate is slowed, not stopped (docs/cli.md "quarry ingest").
     */
    async function sendUntilTaken(request: () => Promise<Ingested>): Promise<Ingested> {
      const giveUpAt = Date.now() + retryForMs
      for (;;) {
        try {
          return await request()
        } catch (e) {
          const wait = e instanceof ApiError && (e.status === 429 || e.status === 503) ? e.retryAfterMs : undefined
          if (wait === undefined || Date.now() + wait > giveUpAt) throw e
          if (!told) out.note(`the server is slowing this ingest down (${e instanceof Error ? e.message : e}); sending again as it says`)
          told = true
          await Bun.sleep(Math.min(Math.max(wait, 100), LONGEST_WAIT_MS))
        }
      }
    }
    progress?.start(total)
    try {
      if (format === 'lines') await sendLines()
      else await sendNdjson()
      await settle()
    } finally {
      progress?.stop()
    }

    /** Plain lines, as bytes, in multipart bodies for POST /api/ingest/lines (see the header). */
    async function sendLines() {
      const boundary = `quarry-${crypto.randomUUID()}`
      const fields: Record<string, string | undefined> = {
        tag,
        source,
        noparsetimestamp: args.timestamps === false ? 'true' : undefined,
        timestampformat: args['timestamp-format'],
        timezone: zone ?? 'UTC',
      }
      let head = ''
      for (const [name, value] of Object.entries(fields))
        if (value !== undefined) head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
      head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="lines"\r\nContent-Type: text/plain\r\n\r\n`
      const headBytes = Buffer.from(head)
      const tailBytes = Buffer.from(`\r\n--${boundary}--\r\n`)
      const room = Math.max(1, batchBytes - headBytes.byteLength - tailBytes.byteLength)
      /** The body being built: the head, then each line and its LF; `lineOf[k]`/`fileOf[k]`: where body line k+1 is. */
      let body = Buffer.allocUnsafe(headBytes.byteLength + room + tailBytes.byteLength)
      let used = headBytes.copy(body, 0)
      let lineOf: number[] = []
      let fileOf: string[] = []
      const flush = async () => {
        if (lineOf.length === 0) return
        used += tailBytes.copy(body, used)
        const bytes = body.subarray(0, used)
        const lines = lineOf
        const names = fileOf
        await dispatch(
          () => c.call<Ingested>('POST', '/api/ingest/lines', { raw: { body: bytes, type: `multipart/form-data; boundary=${boundary}` } }),
          (message) => {
            // The server numbers the lines of the body from 1 (each one an entry here: no blank line is sent).
            const m = /^line (\d+) /.exec(message)
            const k = m ? Number(m[1]) - 1 : -1
            if (k >= 0 && k < lines.length) return `${names[k]} line ${lines[k]} ${message.slice(m![0].length)}`
            return `${names[0]} lines ${lines[0]}-${lines.at(-1)}: ${message}`
          },
        )
        body = Buffer.allocUnsafe(headBytes.byteLength + room + tailBytes.byteLength)
        used = headBytes.copy(body, 0)
        lineOf = []
        fileOf = []
      }
      /**
       * Appends `bytes[from, to)` and an LF to the body being built, once the body before it is sent when the line
       * does not fit (the promise of that send; none when nothing is sent: no await per line, only per body).
       */
      const add = (bytes: Buffer, from: number, to: number, name: string, number: number): Promise<void> | undefined => {
        const n = to - from
        if (lineOf.length > 0 && (used + n + 1 > headBytes.byteLength + room || lineOf.length >= BATCH_ENTRIES))
          return flush().then(() => void add(bytes, from, to, name, number))
        // A line longer than a batch goes alone, in a body of its own size (the server refuses one past its bounds).
        if (used + n + 1 + tailBytes.byteLength > body.byteLength) {
          const bigger = Buffer.allocUnsafe(used + n + 1 + tailBytes.byteLength)
          body.copy(bigger, 0, 0, used)
          body = bigger
        }
        used += bytes.copy(body, used, from, to)
        body[used++] = 10
        lineOf.push(number)
        fileOf.push(name)
        return undefined
      }
      for (const file of files) {
        const name = file === '-' ? 'standard input' : file
        const stream = file === '-' ? Bun.stdin.stream() : Bun.file(file).stream()
        let number = 0
        let partial: Buffer | null = null
        /** Takes `bytes[from, to)` as the file's next line: its CR dropped, left out when blank; as add answers. */
        const take = (bytes: Buffer, from: number, to: number): Promise<void> | undefined => {
          number++
          const end = to > from && bytes[to - 1] === 13 ? to - 1 : to
          return isBlank(bytes, from, end) ? undefined : add(bytes, from, end, name, number)
        }
        for await (const chunk of stream) {
          progress?.advance(chunk.byteLength)
          const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
          let from = 0
          for (let nl = bytes.indexOf(10); nl !== -1; nl = bytes.indexOf(10, from)) {
            let sending: Promise<void> | undefined
            if (partial !== null) {
              const line = Buffer.concat([partial, bytes.subarray(from, nl)])
              partial = null
              sending = take(line, 0, line.byteLength)
            } else sending = take(bytes, from, nl)
            if (sending) await sending
            from = nl + 1
          }
          // The rest of the chunk starts a line that the next chunk ends: copied (the reader may reuse the chunk).
          if (from < bytes.byteLength) partial = partial === null ? Buffer.from(bytes.subarray(from)) : Buffer.concat([partial, bytes.subarray(from)])
        }
        if (partial !== null) await take(partial, 0, partial.byteLength)
      }
      await flush()
    }

    /** NDJSON objects as JSON batches for POST /api/ingest/json, each checked here first. */
    async function sendNdjson() {
      /** The entries of the batch being built, each as its JSON text. */
      let batch: string[] = []
      let places: Where[] = []
      let body = 2 // "[]"
      const send = async () => {
        if (batch.length === 0) return
        const text = `[${batch.join(',')}]`
        const where = places
        await dispatch(
          () => c.call<Ingested>('POST', '/api/ingest/json', { jsonText: text }),
          (message) => {
            const index = /^entry (\d+): /.exec(message)
            const at = index ? where[Number(index[1])] : undefined
            return at
              ? `${at.file} line ${at.line}: ${message.slice(index![0].length)}`
              : `${where[0]!.file} lines ${where[0]!.line}-${where.at(-1)!.line}: ${index ? message.slice(index[0].length) : message}`
          },
        )
        batch = []
        places = []
        body = 2
      }
      for (const file of files) {
        const name = file === '-' ? 'standard input' : file
        const stream = file === '-' ? Bun.stdin.stream() : Bun.file(file).stream()
        let line = 0
        for await (const texts of linesOf(stream, (n) => progress?.advance(n))) {
          for (const text of texts) {
            line++
            if (!NOT_SPACE.test(text)) continue
            let entry: string
            try {
              entry = JSON.stringify(ndjsonEntry(text, `${name} line ${line}`, tag, source))
            } catch (e) {
              await settle()
              throw e instanceof CliError ? new CliError(`${e.message}${stored()}`) : e
            }
            const size = entry.length + 1
            if (batch.length > 0 && (body + size > batchBytes || batch.length >= BATCH_ENTRIES)) await send()
            batch.push(entry)
            places.push({ file: name, line })
            body += size
          }
        }
      }
      await send()
    }
    const result = { Count: done.Count, Size: done.Size, Requests: done.Requests, Tags: [...done.Tags].sort() }
    out.result(result, () =>
      `Ingested ${result.Count} entries (${bytes(result.Size)}) in ${result.Requests} request${result.Requests === 1 ? '' : 's'}` +
      (result.Tags.length ? `, tag${result.Tags.length === 1 ? '' : 's'} ${result.Tags.join(', ')}` : ''))
  },
})
