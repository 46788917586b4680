// Every module of this family, given arguments made of the pieces users type (flags, operators, quotes, brackets,
// paths, escapes), either compiles or is refused with a QueryError; what compiles has a normal form that compiles to
// itself and runs over arbitrary entries without throwing.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { QueryError } from '../errors'
import { compileQueryNow } from '../query'
import { run } from './extractions.testkit'

const MODULES = ['json', 'kv', 'syslog', 'fields', 'csv', 'words', 'alias', 'printf', 'enrich', 'upper', 'lower', 'require', 'ip', 'time']
const PIECES = [
  '-e', '-s', '-q', '-d', '-x', '-v', '-or', '-o', '-r', '-sep', '-dall', '-noclean', '-clean', '-categorize', '-iformat', '-oformat', '-tz',
  'a', 'b.c', 'a.[0]', 'a[1].b', '[0]', '[0x1]', '[]', 'Hostname', 'Severity', 'StructuredID', 'Structured.k', 'Structured[x@1].k', 'as', 'x',
  '==', '!=', '<', '>=', '~', '!~', 'a==1', 'b!=""', '[2]~z', '10.0.0.0/8', 'PRIVATE', '"a b"', '"%d %s"', '"%"', '"\\t"', '`\\x41`', '""',
  '"2006-01-02"', 'UTC', 'America/Chicago', 'Mars/Base', '-', '.', '..', '"q\\"t"', 'TIMESTAMP', 'DATA', '%v', '5', '-1', 'é',
]
const DATA = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('{"a":{"b":[1,{"c":2}]},"x":"10.1.2.3"}', 'a=1 b="x y" x=10.0.0.1', '<13>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v"] msg', '<34>Oct 11 22:14:15 h su: m', 'a,b,"c,d"', '2024-01-01 00:00:00'),
)

describe('the extraction and per-entry modules under generated arguments', () => {
  test.each(MODULES)('%s: compiles or is refused with a QueryError; what compiles runs', (name) => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 6 }), fc.array(DATA, { maxLength: 3 }), (args, datas) => {
        const q = `tag=x ${name} ${args.join(' ')}`
        let text: string
        try {
          text = compileQueryNow(q).text
        } catch (e) {
          if (!(e instanceof QueryError)) throw e
          expect(e.position).toBeGreaterThanOrEqual(0)
          expect(e.position).toBeLessThanOrEqual(q.length)
          return
        }
        expect(compileQueryNow(text).text).toBe(text)
        try {
          run(text, datas, { x: 'a,b\n1,2\n' })
        } catch (e) {
          // enrich may stop at the start when the resource lacks what it names: that is a QueryError too
          if (!(e instanceof QueryError)) throw e
        }
      }),
      { numRuns: 400 },
    )
  })
})
