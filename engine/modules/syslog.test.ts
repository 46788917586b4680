import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { TimeValue } from '../value'
import { entry, normal, refusedAt, values } from './extractions.testkit'
import { parseSyslog } from './syslog'

const ALL = 'Priority Facility Severity Version Timestamp Hostname Appname ProcID MsgID StructuredID StructuredData Message'
const ts = (iso: string) => new TimeValue(Date.parse(iso))
/** The entries' time: 2026, so that RFC 3164 times take the year 2026 unless that puts them after it. */
const at = (line: string, when = '2026-06-15T12:00:00Z') => entry(line, {}, Date.parse(when))

describe('syslog: arguments and normal form', () => {
  test.each([
    ['tag=x syslog Appname Severity', 'tag=x syslog Appname Severity'],
    ['tag=x syslog Severity<3 Hostname != "myhost"', 'tag=x syslog Severity < 3 Hostname != myhost'],
    ['tag=x syslog -e raw Structured.iut Structured[ex@32473].foo as f', 'tag=x syslog -e raw Structured.iut Structured[ex@32473].foo as f'],
    ['tag=x syslog Message ~ "Critical error!"', 'tag=x syslog Message ~ "Critical error!"'],
  ])('%s → %s, which is its own normal form', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })

  test.each([
    ['tag=x syslog', 12],
    ['tag=x syslog Appname hostname', 21],
    ['tag=x syslog -v Appname', 13],
    ['tag=x syslog Structured.', 13],
    ['tag=x syslog Severity <', 23],
  ])('%s is refused at %d', (q, pos) => {
    refusedAt(q, pos)
  })

  test('produces the fields, parameters by their own name', async () => {
    const { compileQueryNow } = await import('../query')
    expect(compileQueryNow('tag=x syslog Appname Structured.iut Structured[a@1].foo Message as m').modules[0]!.produces).toEqual(['Appname', 'iut', 'foo', 'm'])
  })
})

describe('syslog: RFC 5424 samples', () => {
  test('the syslog.md sample (from go-syslog)', () => {
    const line = '<165>4 2018-10-11T22:14:15.003Z mymach.it e - 1 [ex@32473 iut="3" foo="bar"] An application event log entry...'
    expect(values(`tag=x syslog ${ALL} Structured.iut Structured.foo`, [line])).toEqual([
      {
        Priority: 165,
        Facility: 20,
        Severity: 5,
        Version: 4,
        Timestamp: ts('2018-10-11T22:14:15.003Z'),
        Hostname: 'mymach.it',
        Appname: 'e',
        MsgID: '1',
        StructuredID: 'ex@32473',
        StructuredData: '[ex@32473 iut="3" foo="bar"]',
        Message: 'An application event log entry...',
        iut: '3',
        foo: 'bar',
      },
    ])
  })

  test.each([
    [
      '<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \uFEFF\'su root\' failed for lonvick on /dev/pts/8',
      { Priority: 34, Facility: 4, Severity: 2, Version: 1, Timestamp: ts('2003-10-11T22:14:15.003Z'), Hostname: 'mymachine.example.com', Appname: 'su', MsgID: 'ID47', Message: "'su root' failed for lonvick on /dev/pts/8" },
    ],
    [
      '<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It\'s time to make the do-nuts.',
      { Priority: 165, Facility: 20, Severity: 5, Version: 1, Timestamp: ts('2003-08-24T12:14:15.000Z'), Hostname: '192.0.2.1', Appname: 'myproc', ProcID: '8710', Message: "%% It's time to make the do-nuts." },
    ],
    [
      '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]',
      {
        Priority: 165, Facility: 20, Severity: 5, Version: 1, Timestamp: ts('2003-10-11T22:14:15.003Z'), Hostname: 'mymachine.example.com', Appname: 'evntslog', MsgID: 'ID47',
        StructuredID: 'exampleSDID@32473', StructuredData: '[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]',
      },
    ],
    // malformed: a bad time stops at the version; an unclosed structured element stops before it; a PRI too high sets nothing
    ['<13>1 yesterday host app - - - msg', { Priority: 13, Facility: 1, Severity: 5, Version: 1 }],
    ['<13>1 - host app 12 - [a b="c" msg', { Priority: 13, Facility: 1, Severity: 5, Version: 1, Hostname: 'host', Appname: 'app', ProcID: '12' }],
    ['<13>1 - host app 12 - junk msg', { Priority: 13, Facility: 1, Severity: 5, Version: 1, Hostname: 'host', Appname: 'app', ProcID: '12' }],
    ['<192>1 2003-10-11T22:14:15Z host app - - - msg', {}],
    ['<13>1 2003-10-11T22:14:15Z host', { Priority: 13, Facility: 1, Severity: 5, Version: 1, Timestamp: ts('2003-10-11T22:14:15Z'), Hostname: 'host' }],
    ['', {}],
  ])('%j', (line, expected) => {
    expect(values(`tag=x syslog ${ALL}`, [line])).toEqual([expected as never])
  })

  test('structured data: escapes, parameters by element, StructuredID filters against every element', () => {
    const line = '<13>1 - h a - - [foo@bar a="b" q="say \\"x\\" \\] \\\\"][baz@quux x="y" a="other"] m'
    expect(values('tag=x syslog Structured.q Structured[baz@quux].a as a2 Structured[foo@bar].a Structured.nope', [line])).toEqual([{ q: 'say "x" ] \\', a2: 'other', a: 'b' }])
    expect(values('tag=x syslog StructuredID=="baz@quux"', [line])).toEqual([{ StructuredID: 'foo@bar' }])
    expect(values('tag=x syslog StructuredID!="baz@quux"', [line])).toEqual([])
    expect(values('tag=x syslog StructuredID!="foo@bar"', [line])).toEqual([])
    expect(values('tag=x syslog StructuredID!="other"', [line, '<13>1 - h a - - - m'])).toEqual([{ StructuredID: 'foo@bar' }, {}])
    expect(values('tag=x syslog StructuredID=="other"', [line])).toEqual([])
  })
})

describe('syslog: RFC 3164 samples', () => {
  test.each([
    [
      "<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8",
      { Priority: 34, Facility: 4, Severity: 2, Timestamp: ts('2025-10-11T22:14:15Z'), Hostname: 'mymachine', Appname: 'su', Message: "'su root' failed for lonvick on /dev/pts/8" },
    ],
    [
      '<13>Feb  5 17:32:18 10.0.0.99 sshd[4242]: Accepted publickey for root from 10.0.0.1 port 51234 ssh2',
      { Priority: 13, Facility: 1, Severity: 5, Timestamp: ts('2026-02-05T17:32:18Z'), Hostname: '10.0.0.99', Appname: 'sshd', ProcID: '4242', Message: 'Accepted publickey for root from 10.0.0.1 port 51234 ssh2' },
    ],
    [
      'Jun 15 11:59:00 web01 CRON[991]: (root) CMD (run-parts /etc/cron.hourly)',
      { Timestamp: ts('2026-06-15T11:59:00Z'), Hostname: 'web01', Appname: 'CRON', ProcID: '991', Message: '(root) CMD (run-parts /etc/cron.hourly)' },
    ],
    ['<30>Jun 14 08:00:00 systemd[1]: Started Session 5.', { Priority: 30, Facility: 3, Severity: 6, Timestamp: ts('2026-06-14T08:00:00Z'), Appname: 'systemd', ProcID: '1', Message: 'Started Session 5.' }],
    ['<30>2026-06-14T08:00:00.250+02:00 host kernel: oops', { Priority: 30, Facility: 3, Severity: 6, Timestamp: ts('2026-06-14T06:00:00.250Z'), Hostname: 'host', Appname: 'kernel', Message: 'oops' }],
    ['<30>Jun 14 08:00:00 host just a message', { Priority: 30, Facility: 3, Severity: 6, Timestamp: ts('2026-06-14T08:00:00Z'), Hostname: 'host', Message: 'just a message' }],
    // malformed: no time, a bad PRI, a month that is none
    ['<13>Use the BFG!', { Priority: 13, Facility: 1, Severity: 5, Message: 'Use the BFG!' }],
    ['<x>Oct 11 22:14:15 host su: m', {}],
    ['<13>Foo 11 22:14:15 host su: m', { Priority: 13, Facility: 1, Severity: 5 }],
    ['plain text', { Message: 'plain text' }],
  ])('%j', (line, expected) => {
    expect(values(`tag=x syslog ${ALL}`, [at(line)])).toEqual([expected as never])
  })
})

const token = fc.stringMatching(/^[!-~]{1,12}$/).filter((s) => s !== '-')
const sdName = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9.@_-]{0,8}$/)

describe('syslog: generated RFC 5424 messages read back', () => {
  test('every part written is read as it was written', () => {
    fc.assert(
      fc.property(
        fc.record({
          pri: fc.integer({ min: 0, max: 191 }),
          version: fc.integer({ min: 1, max: 99 }),
          time: fc.option(fc.integer({ min: 0, max: 4_000_000_000_000 }), { nil: undefined }),
          host: fc.option(token, { nil: undefined }),
          app: fc.option(token, { nil: undefined }),
          proc: fc.option(token, { nil: undefined }),
          msgid: fc.option(token, { nil: undefined }),
          sd: fc.array(fc.record({ id: sdName, params: fc.uniqueArray(fc.tuple(sdName, fc.string({ maxLength: 8 })), { maxLength: 3, selector: ([k]) => k }) }), { maxLength: 3 }),
          msg: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
        }),
        (m) => {
          const esc = (v: string) => v.replace(/["\\\]]/g, (c) => `\\${c}`)
          const sd = m.sd.length ? m.sd.map((el) => `[${el.id}${el.params.map(([k, v]) => ` ${k}="${esc(v)}"`).join('')}]`).join('') : '-'
          const time = m.time === undefined ? '-' : new Date(m.time).toISOString()
          const line = `<${m.pri}>${m.version} ${time} ${m.host ?? '-'} ${m.app ?? '-'} ${m.proc ?? '-'} ${m.msgid ?? '-'} ${sd}${m.msg === undefined ? '' : ` ${m.msg}`}`
          const r = parseSyslog(line, 0)
          expect(r.Priority).toBe(m.pri)
          expect([r.Facility, r.Severity]).toEqual([Math.floor(m.pri / 8), m.pri % 8])
          expect(r.Version).toBe(m.version)
          expect(r.Timestamp?.ms).toBe(m.time)
          expect([r.Hostname, r.Appname, r.ProcID, r.MsgID]).toEqual([m.host, m.app, m.proc, m.msgid])
          expect(r.sd ?? []).toEqual(m.sd)
          expect(r.Message).toBe(m.msg?.startsWith('\uFEFF') ? m.msg.slice(1) || undefined : m.msg)
        },
      ),
      { numRuns: 300 },
    )
  })

  test('numeric and time filters against a plain comparison of generated priorities', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 191 }), fc.integer({ min: 0, max: 2_000_000_000_000 })), { maxLength: 20 }), fc.integer({ min: 0, max: 7 }), (ms, k) => {
        const lines = ms.map(([p, t]) => `<${p}>1 ${new Date(t).toISOString()} h a - - - x`)
        expect(values(`tag=x syslog Severity < ${k} Priority`, lines).map((v) => v.Priority)).toEqual(ms.filter(([p]) => p % 8 < k).map(([p]) => p))
        const cut = '2020-01-01T00:00:00Z'
        expect(values(`tag=x syslog Timestamp >= ${cut} Priority`, lines).map((v) => v.Priority)).toEqual(ms.filter(([, t]) => t >= Date.parse(cut)).map(([p]) => p))
      }),
      { numRuns: 50 },
    )
  })

  test('-e reads a value instead of DATA', () => {
    expect(values('tag=x syslog -e raw Appname', [entry('x', { raw: '<13>1 - h app - - - m' })])).toEqual([{ raw: '<13>1 - h app - - - m', Appname: 'app' }])
  })
})
