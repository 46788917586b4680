// The stateless head of a query on worker threads (match.ts HeadJob) against the same query run wholly on this
// thread: for random queries over random entries, the same records and the same typed values.
import { afterAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from '../../engine/entry'
import type { RunEnv } from '../../engine/module'
import { HeadStages, Pipeline, statelessHead } from '../../engine/pipeline'
import { compileQueryNow } from '../../engine/query'
import { MODULES } from '../../engine/registry'
import { TransferReader, readEntryOut } from '../../engine/transfer'
import { DurationValue, IPValue, TimeValue, type Value } from '../../engine/value'
import { HeadJob, type HeadInput, MatchAbortedError, MatchPool } from './match'

const pool = new MatchPool(2, 60_000)
afterAll(() => pool.close())

const T0 = Date.parse('2026-01-01T00:00:00Z')
const env = (): RunEnv => ({ resources: new Map(), extractors: new Map(), maxTracked: 1000, start: T0, end: T0 + 3_600_000, renderer: 'text' })

/** Entries over a small alphabet, so that the patterns below match some and not others. */
const anyEntry: fc.Arbitrary<HeadInput> = fc.record({
  ts: fc.integer({ min: T0, max: T0 + 3_599_999 }),
  tag: fc.constantFrom('web', 'db', 'wéb'),
  src: fc.constantFrom('192.0.2.7', '2001:db8::1', ''),
  data: fc.string({ unit: fc.constantFrom('a', 'b', 'c', ' ', '=', '1', '2', '.', 'é'), maxLength: 40 }).map((s) => new Uint8Array(Buffer.from(s))),
})

/** Modules that may make up a stateless head, with the captures they set. */
const headModule = fc.oneof(
  fc.constantFrom('grep a', 'grep -v c', 'grep -i -w "b"', 'grep -s a b', 'grep -e TAG w'),
  fc.constantFrom(
    'regex "a+b"',
    'regex -v "^c"',
    'regex "(?P<x>[ab]+)(?P<n>[12]*)"',
    'regex "(?P<x>[ab]+)(?P<n>[12]*)" n > 1',
    'regex "(?P<x>[ab]+)" x != ab as y',
    'regex -p "(?P<k>\\\\w+)=(?P<v>\\\\w*)" v ~ 1',
    'regex "(?P<k>\\\\w+)=(?P<v>\\\\w*)" k == a',
    'regex -e TAG "(?P<first>.)(?P<rest>.*)"',
    'regex -e SRC "(?P<net>[0-9a-f]+)[.:]"',
    'regex -e TIMESTAMP "T(?P<hour>\\\\d\\\\d)"',
    'regex "(?P<u>é+)"',
  ),
)
/** Queries: a head of those, then maybe some that keep state (limit, count) and more stateless ones after. */
const anyQuery = fc
  .tuple(fc.array(headModule, { minLength: 1, maxLength: 4 }), fc.constantFrom('', 'limit 3', 'limit 1 | regex "(?P<z>c+)"', 'count', 'grep b | count'))
  .map(([head, tail]) => `tag=* ${[...head, ...(tail ? [tail] : [])].join(' | ')}`)

/** A value as the test compares it: its class and content. */
function shape(v: Value): unknown {
  if (v instanceof IPValue) return { ip: v.text }
  if (v instanceof TimeValue) return { time: v.ms }
  if (v instanceof DurationValue) return { duration: v.ns }
  if (v instanceof Uint8Array) return { bytes: [...v] }
  return { [typeof v]: v }
}
const entryShape = (e: Entry) => ({ ts: e.ts, tag: e.tag, src: e.src, data: [...e.data], values: [...e.values].map(([k, v]) => [k, shape(v)]) })

/** The records of the query, every module on this thread. */
function inThread(query: string, entries: HeadInput[]): string[] {
  const records: string[] = []
  const p = new Pipeline(compileQueryNow(query), env(), (r) => records.push(r))
  for (const e of entries) {
    p.push({ ...e, values: new Map() })
    if (p.done()) break
  }
  p.flush()
  return records
}

/** The records of the query, its stateless head on a worker, in batches of `batch` entries. */
async function offloaded(query: string, entries: HeadInput[], batch: number): Promise<string[]> {
  const records: string[] = []
  const q = compileQueryNow(query)
  const p = new Pipeline(q, env(), (r) => records.push(r))
  const job = new HeadJob(q.text, p.head, env())
  scan: for (let i = 0; i < entries.length; i += batch) {
    const sent = entries.slice(i, i + batch)
    const r = new TransferReader(await pool.runHead(job, sent))
    while (r.more) {
      p.push(readEntryOut(r, (k) => sent[k]!).entry, true)
      if (p.done()) break scan
    }
  }
  p.flush()
  return records
}

describe('the stateless head on a worker', () => {
  test('gives the records of the same query run wholly on this thread (random queries, entries, batch sizes)', async () => {
    await fc.assert(
      fc.asyncProperty(anyQuery, fc.array(anyEntry, { maxLength: 60 }), fc.integer({ min: 1, max: 70 }), async (query, entries, batch) => {
        expect(await offloaded(query, entries, batch)).toEqual(inThread(query, entries))
      }),
      { numRuns: 150 },
    )
  })

  test('sets the same values with the same types as the head on this thread, entry by entry', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(headModule, { minLength: 1, maxLength: 4 }), fc.array(anyEntry, { maxLength: 40 }), async (head, entries) => {
        const q = compileQueryNow(`tag=* ${head.join(' | ')}`)
        const n = statelessHead(q)
        expect(n).toBe(head.length)
        const here: { index: number; entry: unknown }[] = []
        let at = 0
        const stages = new HeadStages(q, env(), n, (e) => here.push({ index: at, entry: entryShape(e) }))
        for (; at < entries.length; at++) stages.push({ ...entries[at]!, values: new Map() })
        const r = new TransferReader(await pool.runHead(new HeadJob(q.text, n, env()), entries))
        const there: { index: number; entry: unknown }[] = []
        while (r.more) {
          const { index, entry } = readEntryOut(r, (k) => entries[k]!)
          there.push({ index, entry: entryShape(entry) })
        }
        expect(there).toEqual(here)
      }),
      { numRuns: 100 },
    )
  })

  test('the resources and the range of the RunEnv reach the worker; a head the query does not have is refused', async () => {
    const q = compileQueryNow('tag=* regex "(?P<x>a)" | limit 2 | regex "(?P<y>b)"')
    expect(statelessHead(q)).toBe(1)
    const e = env()
    const job = new HeadJob(q.text, 1, { ...e, resources: new Map([['table', new Uint8Array(Buffer.from('a,b\n'))]]) })
    expect(job.env.resources[0]![1].buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(Buffer.from(job.env.resources[0]![1]).toString()).toBe('a,b\n')
    expect({ start: job.env.start, end: job.env.end }).toEqual({ start: e.start, end: e.end })
    const entries = [{ ts: T0, tag: 'web', src: '', data: new Uint8Array(Buffer.from('ab')) }]
    const r = new TransferReader(await pool.runHead(job, entries)) // the shared resources cross with the batch
    expect(readEntryOut(r, () => entries[0]!).entry.values).toEqual(new Map([['x', 'a']]))
    const refused = await pool.runHead(new HeadJob(q.text, 3, e), entries).then(() => 'answered', (x: Error) => x.message)
    expect(refused).toBe('the first 3 modules are not all stateless')
  })

  test('a batch whose signal aborts is given up and its worker terminated; the pool goes on with a new one', async () => {
    const own = new MatchPool(1, 60_000)
    try {
      const q = compileQueryNow(`tag=* regex "(?P<x>(?:a?){150}a{150})[^a]"`)
      const job = new HeadJob(q.text, 1, env())
      await own.runHead(job, [{ ts: T0, tag: 'web', src: '', data: new Uint8Array(1) }]) // the worker has started
      expect(own.workers).toBe(1)
      const abort = new AbortController()
      const big = own.runHead(job, [{ ts: T0, tag: 'web', src: '', data: new Uint8Array(Buffer.alloc(8 << 20, 'a')) }], abort.signal)
      await Bun.sleep(50)
      abort.abort()
      expect(await big.then(() => 'answered', (x: unknown) => x)).toBeInstanceOf(MatchAbortedError)
      expect(own.workers).toBe(0) // terminated, not left to finish
      const small = new TransferReader(await own.runHead(job, [{ ts: T0, tag: 'web', src: '', data: new Uint8Array(Buffer.from(`${'a'.repeat(150)}b`)) }]))
      expect(readEntryOut(small, () => ({ ts: T0, tag: 'web', src: '', data: new Uint8Array(0) })).entry.values.get('x')).toBe('a'.repeat(150))
    } finally {
      own.close()
    }
  })

  /** Lines of the formats the extraction modules read, and noise. */
  const anyLine = fc.oneof(
    fc.tuple(fc.ipV4(), fc.constantFrom('GET', 'POST'), fc.webPath(), fc.constantFrom(200, 404, 500), fc.nat(5000)).map(([ip, m, p, st, ms]) => `${ip} - - "${m} ${p} HTTP/1.1" ${st} ${ms} took ${ms} ms`),
    fc.dictionary(fc.constantFrom('host', 'path', 'a', 'b.c', 'user'), fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.array(fc.nat(9), { maxLength: 3 }))).map((o) => JSON.stringify(o)),
    fc.array(fc.tuple(fc.constantFrom('host', 'user', 'status', 'ms'), fc.string({ unit: fc.constantFrom('a', 'b', '1', '2', ' ', '"'), maxLength: 6 })), { maxLength: 4 }).map((kv) => kv.map(([k, v]) => `${k}=${v}`).join(' ')),
    fc.tuple(fc.nat(191), fc.constantFrom('host1', 'db-2'), fc.constantFrom('sshd', 'cron'), fc.string({ maxLength: 20 })).map(([pri, h, app, msg]) => `<${pri}>1 2026-01-01T00:00:00Z ${h} ${app} 123 ID47 - ${msg}`),
    fc.string({ maxLength: 30 }),
  )
  const anyLineEntry = fc.record({ ts: fc.integer({ min: T0, max: T0 + 3_599_999 }), tag: fc.constantFrom('web', 'db'), src: fc.constantFrom('192.0.2.7', ''), data: anyLine.map((l) => new Uint8Array(Buffer.from(l))) })

  /** What the head of a query makes of entries: the entries out with their typed values, or the error it throws. */
  async function bothWays(query: string, entries: HeadInput[]) {
    const q = compileQueryNow(query)
    const n = statelessHead(q)
    const here: unknown[] = []
    let at = 0
    let hereOutcome: unknown
    try {
      const stages = new HeadStages(q, env(), n, (e) => here.push({ index: at, entry: entryShape(e) }))
      for (; at < entries.length; at++) stages.push({ ...entries[at]!, values: new Map() })
      hereOutcome = { out: here }
    } catch (e) {
      hereOutcome = { error: (e as Error).message }
    }
    let thereOutcome: unknown
    try {
      const r = new TransferReader(await pool.runHead(new HeadJob(q.text, n, env()), entries))
      const there: unknown[] = []
      while (r.more) {
        const { index, entry } = readEntryOut(r, (k) => entries[k]!)
        there.push({ index, entry: entryShape(entry) })
      }
      thereOutcome = { out: there }
    } catch (e) {
      thereOutcome = { error: (e as Error).message }
    }
    return { here: hereOutcome, there: thereOutcome }
  }

  // Every stateless module of the registry (those other files add too), by the examples it lists: compiled on the
  // worker from the normal form, it must do what it does here.
  const examples = MODULES.flatMap((m) => m.examples.map((x) => [m.name, x] as const)).filter(([, x]) => {
    try {
      return statelessHead(compileQueryNow(`tag=* ${x}`)) > 0
    } catch {
      return false
    }
  })
  test('the registry has stateless modules with examples to check', () => {
    expect(examples.map(([name]) => name)).toEqual(expect.arrayContaining(['grep', 'regex']))
  })
  test.each(examples)('%s: %s does the same on a worker as here, over random lines', async (_, example) => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyLineEntry, { minLength: 1, maxLength: 30 }), async (entries) => {
        const { here, there } = await bothWays(`tag=* ${example}`, entries)
        expect(there).toEqual(here)
      }),
      { numRuns: 40 },
    )
  })
})
