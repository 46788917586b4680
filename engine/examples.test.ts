// Every example a module lists in its help (GET /api/info/searchmodules, docs/query-language.md) is a query a user
// can paste: it compiles after a tag, and runs over lines of the common formats without any error other than the
// engine's own refusals (a QueryError, e.g. a missing resource, or a SearchLimitError).
import { describe, expect, test } from 'bun:test'
import { QueryError, SearchLimitError } from './errors'
import { compileQueryNow } from './query'
import { MODULES } from './registry'
import { type TestEntry, runQuery } from './testing'

/** Lines in the shapes the examples read: JSON, key=value, RFC 5424 syslog, CSV, tab-separated, access logs. */
function lines(): TestEntry[] {
  const out: TestEntry[] = []
  for (let i = 0; i < 12; i++) {
    const host = `host${i % 3}`
    const status = [200, 404, 500][i % 3]
    out.push(
      {
        data: JSON.stringify({
          Author: `a${i % 2}`,
          location: { region_code: 'us' },
          status,
          Data: JSON.stringify({ domain: i % 2 ? 'google.com' : 'example.org' }),
          groups: [{ uid: i }],
          ms: i * 10,
          bytes: i * 100,
          host,
          user: `u${i % 4}`,
        }),
      },
      { data: `devname="fw${i}" level="critical" logdesc="d" msg="m" user=u${i} bytes=${i}` },
      { data: `<34>1 2026-11-27T07:00:0${i % 10}Z ${host} webserver 1 ID47 [ex@32473 foo="${i}"] message ${i}` },
      { data: `${i},GET,/a/${i},${status},${i * 3},things and stuff,x,y,z,/url/${i}` },
      { data: `a\tb\tc\td\te\tf\tg\th\ti\t/url/${i} x\tj` },
      { data: `GET /api/items/${i} HTTP/1.1 took ${i * 50} ms Mozilla Firefox SrcPort=${1000 + i} 10.0.0.${i}` },
    )
  }
  return out
}

describe('the examples of every module', () => {
  const all = MODULES.flatMap((m) => m.examples.map((ex) => ({ module: m.name, ex })))

  test('every module lists at least one example', () => {
    for (const m of MODULES) expect({ module: m.name, examples: m.examples.length > 0 }).toEqual({ module: m.name, examples: true })
  })

  test.each(all)('$module: $ex compiles and uses its module', ({ module, ex }) => {
    const q = compileQueryNow(`tag=x ${ex}`)
    const names = [...q.modules.map((c) => c.name), q.renderer.name]
    expect(names).toContain(module)
  })

  test.each(all)('$module: $ex runs over generated lines', ({ ex }) => {
    try {
      runQuery(`tag=x ${ex}`, lines())
    } catch (e) {
      if (!(e instanceof QueryError || e instanceof SearchLimitError)) throw e
    }
  })
})
