// stats and the math shorthands against SQLite (bun:sqlite) over the same generated rows: per key and per time
// window; stddev, variance and percentiles against plain loops; re-bucketing (merging the windows' aggregates equals
// the whole-range result); -maxtracked, -b, the per-operation keying; the normal form and refused arguments.
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { loadAggregate } from './aggregates'
import type { Aggregate } from '../../aggregate'
import type { Entry } from '../../entry'
import { SearchLimitError } from '../../errors'
import { FLUSH_SLICE, type RunEnv } from '../../module'
import { Pipeline } from '../../pipeline'
import { compileQueryNow } from '../../query'
import { type Value, valueText } from '../../value'
import { RELATIVE_ACCURACY } from './aggregates'
import { refusedAt, runStages } from '../../testing'
import { chartWindowMs } from './stats'

const T0 = Date.UTC(2026, 0, 1)

interface Row {
  id: number
  ts: number
  host?: string
  /** As a module gives it: text (regex) or a number (json), or text that is no number. */
  n?: Value
  user?: string
  body: string
}

/** A deterministic generator (mulberry32), so that every run sees the same rows for a seed. */
function random(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function generate(seed: number, count = 3000): Row[] {
  const r = random(seed)
  const pick = (n: number) => Math.floor(r() * n)
  let ts = T0 + pick(5000)
  return Array.from({ length: count }, (_, id) => {
    ts += pick(40) === 0 ? 20_000 : pick(700)
    const row: Row = { id, ts, body: `line ${id}` }
    if (r() > 0.04) row.host = `h${pick(7)}`
    const roll = r()
    if (roll < 0.45) row.n = String(pick(2000) - 300)
    else if (roll < 0.85) row.n = Math.round((r() * 1000 - 100) * 1000) / 1000
    else if (roll < 0.9) row.n = 'n/a'
    if (r() > 0.1) row.user = `u${pick(40)}`
    return row
  })
}

const numberOf = (v: Value | undefined): number | null => {
  if (typeof v === 'number') return v
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v)
  return null
}

function sqlite(rows: Row[]): Database {
  const db = new Database(':memory:')
  db.run('CREATE TABLE t (id INTEGER, ts INTEGER, host TEXT, n_raw TEXT, n REAL, user TEXT)')
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)')
  db.transaction(() => {
    for (const r of rows) insert.run(r.id, r.ts, r.host ?? null, r.n === undefined ? null : valueText(r.n), numberOf(r.n), r.user ?? null)
  })()
  return db
}

function env(over: Partial<RunEnv> = {}): RunEnv {
  return { resources: new Map(), extractors: new Map(), maxTracked: 1_000_000, start: T0, end: T0 + 86_400_000, renderer: 'text', ...over }
}

/** The entries that leave the query's last module (the renderer aside), rows pushed in time order. */
function run(query: string, rows: Row[], e: RunEnv = env()): Entry[] {
  const entries = rows.map((r): Entry => {
    const values = new Map<string, Value>()
    if (r.host !== undefined) values.set('host', r.host)
    if (r.n !== undefined) values.set('n', r.n)
    if (r.user !== undefined) values.set('user', r.user)
    return { ts: r.ts, tag: 'web', src: '10.0.0.1', data: new TextEncoder().encode(r.body), values }
  })
  return runStages(query, entries, e)
}

const text = (d: Uint8Array) => new TextDecoder().decode(d)

function expectClose(actual: Value | undefined, expected: number | null, scale = 1) {
  expect(expected).not.toBeNull()
  expect(typeof actual).toBe('number')
  expect(Math.abs((actual as number) - expected!)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected!), scale))
}

/** Two-pass population variance and the exact quantile at rank floor(q(n-1)), per key, from the rows. */
function byKey(rows: Row[], key: (r: Row) => string | null) {
  const out = new Map<string, number[]>()
  for (const r of rows) {
    const k = key(r)
    const x = numberOf(r.n)
    if (k === null) continue
    if (!out.has(k)) out.set(k, [])
    if (x !== null) out.get(k)!.push(x)
  }
  return out
}
const variance = (xs: number[]) => {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length
}
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!

const OPS = 'count count(n) as cn sum(n) mean(n) min(n) max(n) unique_count(user) stddev(n) variance(n) p90(n) first(n) last(n)'

describe('stats against SQLite over the same rows', () => {
  for (const seed of [1, 2, 3]) {
    test(`condensed: one entry per host (seed ${seed})`, () => {
      const rows = generate(seed)
      const db = sqlite(rows)
      const got = run(`tag=web stats ${OPS} by host`, rows)
      const want = db
        .query('SELECT host, count(*) c, count(n_raw) cn, sum(n) s, avg(n) m, min(n) lo, max(n) hi, count(DISTINCT user) u FROM t WHERE host IS NOT NULL GROUP BY host')
        .all() as { host: string; c: number; cn: number; s: number; m: number; lo: number; hi: number; u: number }[]
      expect(got.map((e) => e.values.get('host')).sort()).toEqual(want.map((w) => w.host).sort())
      const numbers = byKey(rows, (r) => r.host ?? null)
      for (const w of want) {
        const e = got.find((x) => x.values.get('host') === w.host)!
        const v = e.values
        expect(v.get('count')).toBe(w.c)
        expect(v.get('cn')).toBe(w.cn)
        expectClose(v.get('sum'), w.s, 1e6)
        expectClose(v.get('mean'), w.m, 1e3)
        expect(v.get('min')).toBe(w.lo)
        expect(v.get('max')).toBe(w.hi)
        expect(v.get('unique_count')).toBe(w.u)
        const xs = numbers.get(w.host)!
        expectClose(v.get('variance'), variance(xs), 1e6)
        expectClose(v.get('stddev'), Math.sqrt(variance(xs)), 1e3)
        const exact = quantile(xs, 0.9)
        expect(Math.abs((v.get('p90') as number) - exact)).toBeLessThanOrEqual(RELATIVE_ACCURACY * Math.abs(exact))
        const first = db.query('SELECT n_raw FROM t WHERE host = ? AND n_raw IS NOT NULL ORDER BY ts, id LIMIT 1').get(w.host) as { n_raw: string }
        const last = db.query('SELECT n_raw FROM t WHERE host = ? AND n_raw IS NOT NULL ORDER BY ts DESC, id DESC LIMIT 1').get(w.host) as { n_raw: string }
        expect(valueText(v.get('first'))).toBe(first.n_raw)
        expect(valueText(v.get('last'))).toBe(last.n_raw)
        // the condensed form: the whole range, the keys and an aggregate per result
        expect(e.condensed!.span).toBe(0)
        expect(e.condensed!.start).toBe(T0)
        expect(e.condensed!.by).toEqual(['host'])
        expect([...e.condensed!.aggregates.keys()]).toEqual(['count', 'cn', 'sum', 'mean', 'min', 'max', 'unique_count', 'stddev', 'variance', 'p90', 'first', 'last'])
        expect(e.ts).toBe(T0 + 86_400_000)
      }
      db.close()
    })

    test(`temporal: one entry per host and 10 s window, in time order (seed ${seed})`, () => {
      const rows = generate(seed)
      const db = sqlite(rows)
      const got = run('tag=web stats count sum(n) min(n) max(n) unique_count(user) mean(n) p50(n) by host over 10s', rows)
      const want = db
        .query('SELECT (ts / 10000) * 10000 w, host, count(*) c, sum(n) s, min(n) lo, max(n) hi, count(DISTINCT user) u, avg(n) m FROM t WHERE host IS NOT NULL GROUP BY w, host')
        .all() as { w: number; host: string; c: number; s: number | null; lo: number | null; hi: number | null; u: number; m: number | null }[]
      expect(got.length).toBe(want.length)
      for (let i = 1; i < got.length; i++) expect(got[i]!.ts).toBeGreaterThanOrEqual(got[i - 1]!.ts)
      const numbers = byKey(rows, (r) => (r.host === undefined ? null : `${Math.floor(r.ts / 10_000) * 10_000}|${r.host}`))
      for (const w of want) {
        const e = got.find((x) => x.ts === w.w && x.values.get('host') === w.host)!
        expect(e.condensed!.start).toBe(w.w)
        expect(e.condensed!.span).toBe(10_000)
        expect(e.values.get('count')).toBe(w.c)
        expect(e.values.get('unique_count')).toBe(w.u)
        if (w.s === null) {
          // no number in the window: sum is 0, the others have no result
          expect(e.values.get('sum')).toBe(0)
          expect(e.values.has('min')).toBe(false)
          expect(e.values.has('mean')).toBe(false)
          expect(e.values.has('p50')).toBe(false)
          continue
        }
        expectClose(e.values.get('sum'), w.s, 1e5)
        expectClose(e.values.get('mean'), w.m, 1e3)
        expect(e.values.get('min')).toBe(w.lo!)
        expect(e.values.get('max')).toBe(w.hi!)
        const exact = quantile(numbers.get(`${w.w}|${w.host}`)!, 0.5)
        expect(Math.abs((e.values.get('p50') as number) - exact)).toBeLessThanOrEqual(RELATIVE_ACCURACY * Math.abs(exact))
      }
      db.close()
    })
  }

  test('total is the running sum over the windows; sum starts again in each', () => {
    const rows = generate(4)
    const db = sqlite(rows)
    const got = run('tag=web stats sum(n) total(n) over 1m', rows)
    const want = db.query('SELECT w, s, sum(s) OVER (ORDER BY w) running FROM (SELECT (ts / 60000) * 60000 w, coalesce(sum(n), 0) s FROM t GROUP BY w) ORDER BY w').all() as {
      w: number
      s: number
      running: number
    }[]
    expect(got.map((e) => e.ts)).toEqual(want.map((w) => w.w))
    got.forEach((e, i) => {
      expectClose(e.values.get('sum'), want[i]!.s, 1e6)
      expectClose(e.values.get('total'), want[i]!.running, 1e7)
    })
    // by key: each host's own running total
    const byHost = run('tag=web stats total(n) by host over 1m', rows)
    const hosts = db
      .query('SELECT w, host, sum(s) OVER (PARTITION BY host ORDER BY w) running FROM (SELECT (ts / 60000) * 60000 w, host, coalesce(sum(n), 0) s FROM t WHERE host IS NOT NULL GROUP BY w, host)')
      .all() as { w: number; host: string; running: number }[]
    expect(byHost.length).toBe(hosts.length)
    for (const h of hosts) expectClose(byHost.find((e) => e.ts === h.w && e.values.get('host') === h.host)!.values.get('total'), h.running, 1e7)
    // condensed, total is the sum
    const whole = run('tag=web stats sum(n) total(n)', rows)[0]!
    expect(whole.values.get('total')).toBe(whole.values.get('sum')!)
    db.close()
  })

  test('windows of many keys pass on in slices: at most FLUSH_SLICE rows per entry and per flush step, in window order, totals carried', () => {
    // windows of up to 700 keys (more than FLUSH_SLICE), some of a few entries, so that windows end while earlier
    // ones still wait to be passed on; compared with a plain loop over the same entries
    const windowOf = fc.array(fc.record({ k: fc.integer({ min: 0, max: 699 }), n: fc.integer({ min: -5, max: 5 }) }), { minLength: 1, maxLength: 900, size: 'max' })
    fc.assert(
      fc.property(fc.array(windowOf, { minLength: 1, maxLength: 6 }), (windows) => {
        const entries: Entry[] = windows.flatMap((w, wi) =>
          w.map((r, i): Entry => ({ ts: T0 + wi * 1000 + Math.floor((i * 1000) / w.length), tag: 'web', src: '', data: new Uint8Array(0), values: new Map<string, Value>([['k', r.k], ['n', r.n]]) })),
        )
        const want: Record<string, Value>[] = []
        const running = new Map<number, number>()
        windows.forEach((w) => {
          const cells = new Map<number, { count: number; sum: number }>()
          for (const r of w) {
            const c = cells.get(r.k) ?? { count: 0, sum: 0 }
            c.count++
            c.sum += r.n
            cells.set(r.k, c)
          }
          for (const [k, c] of cells) {
            running.set(k, (running.get(k) ?? 0) + c.sum)
            want.push({ k, count: c.count, sum: c.sum, total: running.get(k)! })
          }
        })
        const stage = compileQueryNow('tag=web stats count sum(n) total(n) by k over 1s').modules[0]!.stage(env())
        const got: Entry[] = []
        const out = (e: Entry) => got.push(e)
        for (const e of entries) {
          const before = got.length
          stage.push(e, out)
          expect(got.length - before).toBeLessThanOrEqual(FLUSH_SLICE)
        }
        const steps = stage.flush!(out) as Iterator<unknown> & Iterable<unknown>
        for (let before = got.length; !steps.next().done; before = got.length) expect(got.length - before).toBeLessThanOrEqual(FLUSH_SLICE)
        expect(got.map((e) => Object.fromEntries(e.values))).toEqual(want)
        const windowStarts = got.map((e) => e.ts)
        expect(windowStarts).toEqual(windowStarts.toSorted((a, b) => a - b))
      }),
      // no shrinking: a failing case of thousands of entries would take minutes to shrink
      { numRuns: 40, endOnFailure: true },
    )
  })

  test('merging the windows of a temporal run (as a renderer re-buckets) gives the condensed results', () => {
    const rows = generate(5)
    const ops = 'count sum(n) total(n) mean(n) min(n) max(n) stddev(n) unique_count(user) first(n) last(n) p99(n) median(n)'
    const windows = run(`tag=web stats ${ops} by host over 5s`, rows)
    const whole = run(`tag=web stats ${ops} by host`, rows)
    for (const e of whole) {
      const host = e.values.get('host')
      const merged = new Map<string, Aggregate>()
      for (const w of windows.filter((x) => x.values.get('host') === host)) {
        for (const [name, a] of w.condensed!.aggregates) {
          // through save/load, as a stored record would be read back
          const copy = loadAggregate(JSON.parse(JSON.stringify(a.save())))
          const m = merged.get(name)
          if (m) m.merge(copy)
          else merged.set(name, copy)
        }
      }
      for (const [name, a] of e.condensed!.aggregates) {
        const m = merged.get(name)!
        expect(m.n).toBe(a.n)
        const x = m.result()
        const y = a.result()
        if (['sum', 'total', 'mean', 'stddev'].includes(name)) expectClose(x, y as number, 1e7)
        else expect(x).toEqual(y)
      }
    }
  }, 30_000)

  test('the shorthands answer as stats with one operation', () => {
    const rows = generate(6)
    for (const [short, long] of [
      ['count by host', 'stats count by host'],
      ['count n by host over 1m', 'stats count(n) by host over 1m'],
      ['sum n by host', 'stats sum(n) by host'],
      ['mean n as avg by host', 'stats mean(n) as avg by host'],
      ['min n by host as lo', 'stats min(n) as lo by host'],
      ['max n over 30s', 'stats max(n) over 30s'],
      ['stddev n by user', 'stats stddev(n) by user'],
      ['variance n', 'stats variance(n)'],
    ]) {
      const a = run(`tag=web ${short}`, rows)
      const b = run(`tag=web ${long}`, rows)
      expect(a.length).toBeGreaterThan(0)
      expect(a.map((e) => [e.ts, [...e.values]])).toEqual(b.map((e) => [e.ts, [...e.values]]))
    }
  })
})

describe('keys: the per-operation by of the wiki', () => {
  const rows = generate(7, 500)
  const groups = (q: string) => {
    const got = run(q, rows)
    return [...new Set(got.map((e) => `${e.condensed!.by.join(',')}:${[...e.condensed!.aggregates.keys()].join(',')}`))]
  }

  test('a single by after the last operation applies to all', () => {
    expect(groups('tag=web stats count sum(n) by host')).toEqual(['host:count,sum'])
  })

  test('a by list joined by commas (the wiki\'s `count by Appname,Severity`) is the list written apart', () => {
    const counts = (q: string) => run(q, rows).map((e) => [...e.values.entries()].sort().join(' ')).sort()
    for (const [joined, apart] of [
      ['tag=web stats count sum(n) by host,user', 'tag=web stats count sum(n) by host user'],
      ['tag=web count by host,user', 'tag=web count by host user'],
      ['tag=web sum n by host, user over 1m', 'tag=web sum n by host user over 1m'],
    ]) {
      expect(counts(joined!)).toEqual(counts(apart!))
      expect(compileQueryNow(joined!).text).toBe(compileQueryNow(apart!).text)
    }
    expect(groups('tag=web stats count by host,user')).toEqual(['host,user:count'])
    expect(() => compileQueryNow('tag=web count by ,')).toThrow('"by" needs at least one value name')
    expect(() => compileQueryNow('tag=web count by host,host')).toThrow('a "by" list names a value twice')
  })

  test('a by elsewhere applies to its operation only', () => {
    expect(groups('tag=web stats mean(n) by host user stddev(n)')).toEqual(['host,user:mean', ':stddev'])
    expect(groups('tag=web stats sum(n) by host sum(n) as all')).toEqual(['host:sum', ':all'])
    expect(groups('tag=web stats mean(n) by host stddev(n) max(n) by host user over 1m').sort()).toEqual([':stddev', 'host,user:max', 'host:mean'])
  })

  test('operations with the same keys share their entries; the unkeyed one counts all', () => {
    const got = run('tag=web stats count by host sum(n) by host count as all', rows)
    const keyed = got.filter((e) => e.condensed!.by.length === 1)
    expect(keyed.every((e) => e.values.has('count') && e.values.has('sum'))).toBe(true)
    expect(got.find((e) => e.condensed!.by.length === 0)!.values.get('all')).toBe(rows.length)
    expect(keyed.reduce((s, e) => s + (e.values.get('count') as number), 0)).toBe(rows.filter((r) => r.host !== undefined).length)
  })

  test('keys are told apart by their text, long ones too; 1 and "1" are one key', () => {
    const long = 'k'.repeat(200)
    const rows: Row[] = [`${long}a`, `${long}b`, `${long}a`, '1', 1 as unknown as string].map((host, id) => ({ id, ts: T0 + id, host, body: '' }))
    const got = run('tag=web stats count by host', rows)
    expect(got.map((e) => [e.values.get('host'), e.values.get('count')])).toEqual([
      [`${long}a`, 2],
      [`${long}b`, 1],
      ['1', 2],
    ])
    // the other order too: the number makes the key, the string finds it after (a string's cell is found by the string)
    const mixed: Row[] = [1 as unknown as string, '1', '1', 1 as unknown as string, '2'].map((host, id) => ({ id, ts: T0 + id, host, body: '' }))
    expect(run('tag=web stats count by host', mixed).map((e) => [e.values.get('host'), e.values.get('count')])).toEqual([
      [1, 4],
      ['2', 1],
    ])
  })
})

describe('modes, DATA and -b', () => {
  const rows = generate(8, 400)

  test('with the chart renderer and no over, windows follow chartWindowMs', () => {
    const e = env({ renderer: 'chart', start: T0, end: T0 + 6 * 3_600_000 })
    const span = chartWindowMs(e.start, e.end)
    expect(span).toBe(5000)
    const got = run('tag=web stats count', rows, e)
    const windows = new Set(rows.map((r) => Math.floor(r.ts / span) * span))
    expect(got.map((x) => x.ts)).toEqual([...windows])
    expect(got.reduce((s, x) => s + (x.values.get('count') as number), 0)).toBe(rows.length)
    expect(got.every((x) => x.condensed!.span === span)).toBe(true)
  })

  test.each([
    [3_600_000, 1000],
    [86_400_000, 10_000],
    [30 * 86_400_000, 300_000],
    [3650 * 86_400_000, 43_200_000],
    [36500 * 86_400_000, 4 * 86_400_000],
  ])('a chart over %d ms has windows of %d ms', (range, span) => {
    expect(chartWindowMs(T0, T0 + range)).toBe(span)
    expect(range / span).toBeLessThanOrEqual(10_000)
  })

  test('a chart window is 1 s when the range is unknown', () => {
    expect(chartWindowMs(0, T0)).toBe(1000)
    expect(chartWindowMs(T0, T0)).toBe(1000)
  })

  test('without -b DATA is the result; with -b the body of the entry with the extreme', () => {
    const best = Math.max(...rows.map((r) => numberOf(r.n)).filter((x): x is number => x !== null))
    const plain = run('tag=web stats max(n)', rows)[0]!
    expect(text(plain.data)).toBe(String(best))
    const kept = run('tag=web stats -b max(n)', rows)[0]!
    const winner = rows.find((r) => numberOf(r.n) === best)!
    expect(text(kept.data)).toBe(winner.body)
    expect(kept.values.get('max')).toBe(best)
    const several = run('tag=web stats count sum(n) as s', rows)[0]!
    expect(text(several.data)).toBe(`count=${rows.length} s=${several.values.get('s')}`)
    // -b without an extreme: the latest entry of the key
    expect(text(run('tag=web stats -b count', rows)[0]!.data)).toBe(rows.at(-1)!.body)
  })

  test('condensed without entries: the unkeyed group answers count 0; keyed and temporal answer nothing', () => {
    const none = run('tag=web stats count sum(n) mean(n)', [])
    expect(none).toHaveLength(1)
    expect([...none[0]!.values]).toEqual([
      ['count', 0],
      ['sum', 0],
    ])
    expect(run('tag=web stats count by host', [])).toEqual([])
    expect(run('tag=web stats count over 1m', [])).toEqual([])
  })

  test('a plain count at the end answers {"Count": n} as before', () => {
    const records: string[] = []
    const q = compileQueryNow('tag=web count')
    expect(q.renderer.name).toBe('table')
    const p = new Pipeline(q, env({ renderer: q.renderer.name }), (r) => records.push(r))
    for (let i = 0; i < 5; i++) p.push({ ts: T0 + i, tag: 'web', src: '', data: new Uint8Array(1), values: new Map() })
    p.flush()
    expect(records).toEqual(['{"Count":5}'])
    const empty: string[] = []
    const p0 = new Pipeline(q, env({ renderer: 'table' }), (r) => empty.push(r))
    p0.flush()
    expect(empty).toEqual(['{"Count":0}'])
    expect(compileQueryNow('tag=web count by host').renderer.name).toBe('text')
  })
})

describe('-maxtracked', () => {
  const rows = generate(9, 600)
  const limitError = (query: string, e = env()) => {
    let error: unknown
    try {
      run(query, rows, e)
    } catch (x) {
      error = x
    }
    expect(error).toBeInstanceOf(SearchLimitError)
    return (error as Error).message
  }

  test('more keys than -maxtracked end the search with an error naming it and its value', () => {
    expect(limitError('tag=web stats -maxtracked 3 count by host')).toContain('raise -maxtracked (now 3)')
    expect(limitError('tag=web count -maxtracked 6 by host user')).toContain('-maxtracked (now 6)')
    expect(run('tag=web stats -maxtracked 7 count by host', rows)).toHaveLength(7)
  })

  test('the default is the run environment maxTracked', () => {
    expect(limitError('tag=web stats count by user', env({ maxTracked: 20 }))).toContain('(now 20)')
  })

  test('unique_count counts its distinct values toward it', () => {
    // 1 key and 40 users
    expect(limitError('tag=web stats -maxtracked 30 unique_count(user)')).toContain('keys and values')
    expect(run('tag=web stats -maxtracked 41 unique_count(user)', rows)[0]!.values.get('unique_count')).toBe(40)
  })

  test('in windows, the keys of one window count; the running totals of total count over the search', () => {
    // at most two entries per 1 ms window: never more than two keys at once
    const pairs = new Set(rows.filter((r) => r.host).map((r) => `${r.ts} ${r.host}`))
    expect(run('tag=web stats -maxtracked 2 count by host over 1ms', rows).length).toBe(pairs.size)
    expect(limitError('tag=web stats -maxtracked 3 total(n) by host over 1ms')).toContain('total(n) by host')
  })
})

describe('the query language', () => {
  const normal = (q: string) => compileQueryNow(q).text

  test.each([
    ['tag=a stats count', 'tag=a stats count'],
    ['tag=a stats   count(n)  as  c   by  host ', 'tag=a stats count(n) as c by host'],
    ['tag=a stats percentile(n, 95) by host over 5m', 'tag=a stats percentile(n,95) by host over 5m'],
    ['tag=a stats -b -maxtracked 10 max(n)', 'tag=a stats -b -maxtracked 10 max(n)'],
    ['tag=a stats sum("a b") p99.9(x) as slow median(x)', 'tag=a stats sum("a b") p99.9(x) as slow median(x)'],
    ['tag=a stats mean(len) by IP stddev(len) max(len) by IP Port over 1m', 'tag=a stats mean(len) by IP stddev(len) max(len) by IP Port over 1m'],
    ['tag=a stats count by "by" "sum" "over"', 'tag=a stats count by "by" "sum" "over"'],
    ['tag=a count "by" by "as"', 'tag=a count "by" by "as"'],
    ['tag=a count', 'tag=a count'],
    ['tag=a count -maxtracked 5000 by DstIP', 'tag=a count -maxtracked 5000 by DstIP'],
    ['tag=a sum  Length  by SrcMAC', 'tag=a sum Length by SrcMAC'],
    ['tag=a mean RPM as r over 1h30m', 'tag=a mean RPM as r over 1h30m'],
    ['tag=a max rpm by SRC as top', 'tag=a max rpm as top by SRC'],
  ])('%j is normalised to %j, which compiles to the same normal form', (input, expected) => {
    expect(normal(input)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })

  test('consumed and produced values (the parse answer hints)', () => {
    const m = compileQueryNow('tag=a stats count sum(n) as s by host p95(ms) by path').modules[0]!
    expect(m.consumes).toEqual(['n', 'host', 'ms', 'path'])
    expect(m.produces).toEqual(['count', 'host', 's', 'path', 'p95'])
  })

  test.each([
    ['tag=a stats', 11, 0],
    ['tag=a stats frob(x)', 12, 0],
    ['tag=a stats "count"', 12, 0],
    ['tag=a stats count by', 20, 0],
    ['tag=a stats count over 5m by x', 26, 0],
    ['tag=a stats count over 5x', 23, 0],
    ['tag=a stats count over 500us', 23, 0],
    ['tag=a stats count over', 22, 0],
    ['tag=a stats count count', 18, 0],
    ['tag=a stats -maxtracked 0 count', 24, 0],
    ['tag=a stats -maxtracked 99999999999 count', 24, 0],
    ['tag=a stats -q count', 12, 0],
    ['tag=a stats percentile(x)', 12, 0],
    ['tag=a stats percentile(x, 101)', 12, 0],
    ['tag=a stats sum(x', 17, 0],
    ['tag=a stats sum(x,y)', 12, 0],
    ['tag=a stats as x', 12, 0],
    ['tag=a stats by x', 12, 0],
    ['tag=a stats count as', 20, 0],
    ['tag=a stats count by a b by c', 25, 0],
    ['tag=a stats count by a a', 18, 0],
    ['tag=a count x y', 14, 0],
    ['tag=a stats count as host by host', 12, 0],
    ['tag=a count by n as n', 6, 0],
    ['tag=a grep x | count by', 23, 1],
    ['tag=a grep x | sum n over 0s', 26, 1],
  ])('%j is refused at position %d, module %d', (input, position, moduleIndex) => {
    refusedAt(input, position, moduleIndex)
  })
})
