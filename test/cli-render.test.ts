// `quarry search run` per renderer against a live server: a table prints its columns, a chart its series by window,
// a number card its values; --csv and --json give the renderer's downloads. Counts are checked against the
// ingested entries.
import { describe, expect, test } from 'bun:test'
import { cliHarness } from './cli'

const server = cliHarness()
const { ok, adminHome, savedJwt, api } = server

const MIN = 60_000
const HOSTS = ['a', 'b', 'c']

/** 90 web entries "host=<h> n=<i>" one second apart from a whole minute, host HOSTS[i % 7 % 3]. */
async function ingest(home: string) {
  const t0 = Math.floor((Date.now() - 10 * MIN) / MIN) * MIN
  const rows = Array.from({ length: 90 }, (_, i) => ({ ts: t0 + i * 1000, host: HOSTS[(i % 7) % 3]!, n: i - 45 }))
  const json = rows.map((r) => ({ TS: new Date(r.ts).toISOString(), Tag: 'web', Data: Buffer.from(`host=${r.host} n=${r.n}`).toString('base64') }))
  await api(savedJwt(home), 'POST', '/api/ingest/json', json)
  return { t0, rows, start: new Date(t0 - MIN).toISOString(), end: new Date(t0 + 5 * MIN).toISOString() }
}

const EXTRACT = 'tag=web regex "host=(?P<host>\\w+) n=(?P<n>\\S+)"'

describe('quarry search run per renderer', () => {
  test('table, chart and number card: printed, and as --csv and --json', async () => {
    const home = await adminHome()
    const { t0, rows, start, end } = await ingest(home)
    const run = (query: string, ...more: string[]) => ok(home, ['search', 'run', query, '--start', start, '--end', end, ...more])

    // a table: its columns, one line per row
    const table = (await run(`${EXTRACT} | table host n`)).stdout.trimEnd().split('\n')
    expect(table[0]).toMatch(/^HOST\s+N$/)
    expect(table.slice(1).map((l) => l.split(/\s+/))).toEqual(rows.map((r) => [r.host, String(r.n)]))
    const csv = (await run(`${EXTRACT} | table host n`, '--csv')).stdout
    expect(csv).toBe(`host,n\r\n${rows.map((r) => `${r.host},${r.n}\r\n`).join('')}`)
    expect((await run(`${EXTRACT} | table host n`, '--json')).json()).toEqual(rows.map((r) => ({ host: r.host, n: String(r.n) }))) // captures are text, as extracted

    // a chart of entries per host: one line per window (the chart keeps windows of a thousandth of the range,
    // at least a second: here one per entry), a column per series
    const chart = (await run(`${EXTRACT} | chart count by host`, '--json')).json() as Record<string, unknown>[]
    const perMinute = new Map<string, number>()
    for (const o of chart) {
      const minute = Math.floor((Date.parse(String(o.TS)) - t0) / MIN)
      for (const h of HOSTS) perMinute.set(`${minute} ${h}`, (perMinute.get(`${minute} ${h}`) ?? 0) + Number(o[h] ?? 0))
    }
    for (const m of [0, 1]) {
      for (const h of HOSTS) expect(perMinute.get(`${m} ${h}`)).toBe(rows.filter((r) => r.host === h && r.ts >= t0 + m * MIN && r.ts < t0 + (m + 1) * MIN).length)
    }
    const printed = (await run(`${EXTRACT} | chart count by host`)).stdout.split('\n')
    expect(printed[0]).toMatch(/^TS\s+A\s+B\s+C$/)
    expect(printed[1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+/)
    const chartCsv = (await run(`${EXTRACT} | chart count by host`, '--csv')).stdout.split('\r\n')
    expect(chartCsv[0]).toBe('TS,a,b,c')

    // a number card: its values
    expect((await run('tag=web count | numbercard count')).stdout.trim()).toMatch(new RegExp(`^count:\\s+${rows.length}$`))
    expect((await run('tag=web count | gauge (count 0 100 "entries")')).stdout.trim()).toMatch(new RegExp(`^entries:\\s+${rows.length} \\(0 to 100\\)$`))
    expect((await run('tag=web count | numbercard count', '--json')).json()).toEqual([{ Name: 'count', Magnitude: rows.length, Min: 0, Max: 0 }])
  }, 60_000)
})
