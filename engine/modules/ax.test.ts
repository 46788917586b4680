// ax against a plain computation: generated access lines of two tags, each with its own format and definition,
// the fields ax sets compared with those a split of the same line gives.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from '../entry'
import { QueryError } from '../errors'
import type { AutoExtractorDefinition, RunEnv } from '../module'
import { Pipeline } from '../pipeline'
import { compileQueryNow } from '../query'
import { valueText } from '../value'
import { columnNames, compileExtractor, extractorCall } from './ax'

const enc = new TextEncoder()
const env = (defs: AutoExtractorDefinition[]): RunEnv => ({
  resources: new Map(),
  extractors: new Map(defs.map((d) => [d.tag, d])),
  maxTracked: 1000,
  start: 0,
  end: 0,
  renderer: 'text',
})
const entry = (tag: string, line: string, ts = 0): Entry => ({ ts, tag, src: '', data: enc.encode(line), values: new Map() })

/** Runs `tag=... ax <args>` over the entries; answers the values of each entry that passed, as text. */
function run(args: string, defs: AutoExtractorDefinition[], entries: Entry[]): Record<string, string>[] {
  const q = compileQueryNow(`tag=web,app ax ${args}`)
  const stage = q.modules[0]!.stage(env(defs))
  const out: Record<string, string>[] = []
  for (const e of entries) stage.push(e, (x) => out.push(Object.fromEntries([...x.values].map(([k, v]) => [k, valueText(v)]))))
  return out
}

const WEB: AutoExtractorDefinition = { tag: 'web', module: 'regex', params: '^(?P<method>[A-Z]+) (?P<url>\\S+) (?P<status>\\d+)$', args: '' }
const APP: AutoExtractorDefinition = { tag: 'app', module: 'regex', params: 'status=(?P<status>\\d+) user=(?P<user>\\w+)', args: '' }

const METHODS = ['GET', 'POST', 'PUT', 'DELETE']
const webLine = fc.tuple(fc.constantFrom(...METHODS), fc.stringMatching(/^\/[a-z0-9]{0,8}$/), fc.integer({ min: 100, max: 599 }))
const appLine = fc.tuple(fc.integer({ min: 100, max: 599 }), fc.stringMatching(/^[a-z]{1,6}$/))

describe('ax', () => {
  test('sets every field of each tag\'s definition, and only the named ones with arguments', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(webLine.map((w) => ['web', w] as const), appLine.map((a) => ['app', a] as const)), { maxLength: 40 }), (lines) => {
        // ax sets values on the entries it passes: each run gets entries of its own.
        const entries = () => lines.map(([tag, l]) => (tag === 'web' ? entry('web', `${l[0]} ${l[1]} ${l[2]}`) : entry('app', `status=${l[0]} user=${l[1]}`)))
        const all = run('', [WEB, APP], entries())
        const expected = lines.map(([tag, l]) =>
          tag === 'web' ? { method: String(l[0]), url: String(l[1]), status: String(l[2]) } : { status: String(l[0]), user: String(l[1]) },
        )
        expect(all).toEqual(expected)
        // Named fields only; a field the tag's definition lacks is left unset.
        expect(run('status user as who', [WEB, APP], entries())).toEqual(
          expected.map((x) => ('user' in x ? { status: x.status, who: x.user } : { status: x.status })),
        )
      }),
      { numRuns: 50 },
    )
  })

  test('inline filters keep what a plain comparison keeps', () => {
    fc.assert(
      fc.property(fc.array(webLine, { maxLength: 60 }), fc.integer({ min: 100, max: 599 }), (lines, limit) => {
        const entries = lines.map((l) => entry('web', `${l[0]} ${l[1]} ${l[2]}`))
        const got = run(`status>=${limit} method!=GET`, [WEB], entries)
        const want = lines.filter((l) => l[2] >= limit && l[0] !== 'GET').map((l) => ({ status: String(l[2]), method: l[0] }))
        expect(got).toEqual(want)
      }),
      { numRuns: 50 },
    )
  })

  test('entries of a tag without a definition, and lines the extraction does not match, are dropped', () => {
    const got = run('', [WEB], [entry('app', 'status=200 user=x'), entry('web', 'not an access line'), entry('web', 'GET / 200')])
    expect(got).toEqual([{ method: 'GET', url: '/', status: '200' }])
  })

  test('a definition that does not compile ends the search when its tag\'s first entry comes, naming the tag', () => {
    const broken = { tag: 'app', module: 'regex', params: '(?P<x', args: '' }
    const stage = compileQueryNow('tag=web,app ax').modules[0]!.stage(env([WEB, broken]))
    const out: Entry[] = []
    stage.push(entry('web', 'GET / 200'), (e) => out.push(e))
    expect(out).toHaveLength(1)
    expect(() => stage.push(entry('app', 'x'), () => {})).toThrow(/^ax: parse error for extractor on tag app: invalid regular expression/)
  })

  test('definitions become one module call; -e, pipes and non-extraction modules are refused', () => {
    expect(extractorCall({ module: 'regex', params: 'a "b" (?P<c>\\d)', args: '' })).toBe('regex `a "b" (?P<c>\\d)`')
    expect(extractorCall({ module: 'csv', params: 'ts, app,, src', args: '' })).toBe('csv [0] as ts [1] as app [3] as src')
    expect(extractorCall({ module: 'fields', params: 'a b', args: '-d "\\t"' })).toBe('fields -d "\\t" [0] as a [1] as b')
    expect(extractorCall({ module: 'json', params: 'a.b c', args: '' })).toBe('json a.b c')
    expect(columnNames(' x ,y ')).toEqual(['x', 'y'])
    expect(compileExtractor('web', WEB).produces).toEqual(['method', 'url', 'status'])
    expect(() => compileExtractor('web', { ...WEB, args: '-e x' })).toThrow(QueryError)
    expect(() => compileExtractor('web', { tag: 'web', module: 'grep', params: 'x', args: '' })).toThrow('"grep" is not an extraction module')
    expect(() => compileExtractor('web', { tag: 'web', module: 'ax', params: '', args: '' })).toThrow('is not an extraction module')
    expect(() => compileExtractor('web', { tag: 'web', module: 'regex', params: 'x', args: '| limit 1' })).toThrow(QueryError)
  })

  test('ax reads its arguments as extraction items and says it needs the auto-extractors', () => {
    const m = compileQueryNow('tag=web ax status == 200 url as path').modules[0]!
    expect(m.text).toBe('ax status == 200 url as path')
    expect(m.produces).toEqual(['status', 'path'])
    expect(m.needs).toEqual({ extractors: true })
    expect(() => compileQueryNow('tag=web ax status ==')).toThrow(QueryError)
  })

  test('the other extraction modules as definitions: json, kv, csv and fields give what a plain split gives', () => {
    const rows = fc.sample(fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), fc.integer({ min: 0, max: 9999 })), { numRuns: 60, seed: 11 })
    const cases: [AutoExtractorDefinition, (host: string, n: number) => string][] = [
      [{ tag: 'web', module: 'json', params: 'host n', args: '' }, (host, n) => JSON.stringify({ host, n, other: [1, 2] })],
      [{ tag: 'web', module: 'kv', params: 'host n', args: '' }, (host, n) => `a=1 host=${host} n=${n}`],
      [{ tag: 'web', module: 'csv', params: 'host,n', args: '' }, (host, n) => `${host},${n}`],
      [{ tag: 'web', module: 'fields', params: 'skip host n', args: '-d " "' }, (host, n) => `x ${host} ${n}`],
    ]
    for (const [definition, line] of cases) {
      const got = run('host n', [definition], rows.map(([host, n]) => entry('web', line(host, n))))
      expect({ module: definition.module, got }).toEqual({ module: definition.module, got: rows.map(([host, n]) => ({ host, n: String(n) })) })
    }
  })
})


describe('ax before a stats', () => {
  // A stats after ax replaces every value, so ax's own output may leave its fields unset (RunEnv.unread); the
  // definition's stage must still set them for ax to read and filter.
  test('filters on fields nothing after reads still apply: the count is a plain loop\'s', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `${METHODS[i % 4]} /p${i % 7} ${[200, 404, 500][i % 3]}`)
    const q = compileQueryNow('tag=web ax method==GET status>=400 | count')
    const runEnv = { ...env([WEB]), renderer: q.renderer.name, start: 1, end: 2 }
    const records: string[] = []
    const p = new Pipeline(q, runEnv, (r) => records.push(r))
    lines.forEach((l, i) => p.push(entry('web', l, i)))
    for (const _ of p.flushSteps());
    const expected = lines.filter((l) => l.startsWith('GET ') && Number(l.split(' ')[2]) >= 400).length
    expect(expected).toBeGreaterThan(0)
    expect(records.map((r) => JSON.parse(r))).toEqual([{ Count: expected }])
  })
})
