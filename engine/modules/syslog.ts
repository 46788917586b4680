// syslog (gravwell/wiki search/syslog/syslog.md): extracts the parts of syslog messages, RFC 5424 and RFC 3164.
//   syslog [-e <value>] <field> [op operand] [as name] ...
// Fields: Priority, Facility, Severity, Version (numbers), Timestamp (a time), Hostname, Appname, ProcID, MsgID,
// Message (text), StructuredID (the ID of the first structured-data element), StructuredData (the whole structured
// data as written), `Structured.<param>` (a parameter of any element; named `<param>`) and
// `Structured[<id>].<param>` (of the element with that ID). Field names are matched as written (Hostname, not
// hostname); an unknown one is refused.
//
// RFC 5424: `<PRI>VERSION TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA [MSG]`; `-` (nil) sets nothing; a
// BOM before MSG is dropped. RFC 3164 (a PRI not followed by a version): `<PRI>Mmm dd hh:mm:ss HOSTNAME TAG[PID]: MSG`,
// also without the PRI or the HOSTNAME, or with an RFC 3339 time instead; its timestamp has no year and no zone: it
// is read in UTC, in the entry's year (the year before when that would put it more than a day after the entry).
// The message is read left to right: where a part is malformed, the parts to its left are set and those to its right
// are not (syslog.md); a PRI above 191 or a time that does not parse stops there. An entry that is no syslog sets
// nothing.
//
// Filters: a missing field sets nothing and keeps the entry unless filtered (`!=` and `!~` keep it, as for json and
// kv). `Timestamp` compares with a time written in RFC 3339 (`Timestamp >= 2024-01-01T00:00:00Z`). A filter on
// StructuredID is checked against the IDs of every element: `==` and `~` pass when one matches, `!=` and `!~` when
// none is excluded (syslog.md).
import { quote } from '../lex'
import { type ModuleDef, argError, flagsText, readFlags } from '../module'
import { TimeValue, type Value } from '../value'
import { type Extraction, extractingModule, extractionsText, flagValue, inputText, readExtractions } from './extractions'

export interface SDElement {
  id: string
  params: [string, string][]
}

export interface SyslogRecord {
  Priority?: number
  Facility?: number
  Severity?: number
  Version?: number
  Timestamp?: TimeValue
  Hostname?: string
  Appname?: string
  ProcID?: string
  MsgID?: string
  StructuredData?: string
  sd?: SDElement[]
  Message?: string
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/
const BSD_TIME = /^([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(?= |$)/

/** An RFC 3339 time (as RFC 5424 restricts it) in milliseconds; null when it is none. */
export function rfc3339(s: string): number | null {
  const m = RFC3339.exec(s)
  if (!m) return null
  const [, y, mo, d, h, mi, sec, frac, zone] = m
  if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31 || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 60) return null
  let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec), frac ? Math.floor(Number(`0${frac}`) * 1000) : 0)
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone![0] === '-' ? -1 : 1
    ms -= sign * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6))) * 60_000
  }
  return ms
}

/** Splits off the next space-delimited word of `s` from `i`: the word and the index past its space. */
function word(s: string, i: number): [string, number] | null {
  if (i >= s.length) return null
  const sp = s.indexOf(' ', i)
  return sp < 0 ? [s.slice(i), s.length] : [s.slice(i, sp), sp + 1]
}

const nil = (w: string) => (w === '-' ? undefined : w)

/** Reads one syslog message (see the header); `entryTs` gives the year of an RFC 3164 timestamp. */
export function parseSyslog(s: string, entryTs: number): SyslogRecord {
  const r: SyslogRecord = {}
  let i = 0
  if (s.startsWith('<')) {
    const m = /^<(\d{1,3})>/.exec(s)
    if (!m) return r
    const pri = Number(m[1])
    if (pri > 191) return r
    r.Priority = pri
    r.Facility = pri >> 3
    r.Severity = pri & 7
    i = m[0].length
    const v = /^([1-9]\d?) /.exec(s.slice(i, i + 4))
    if (v) return rfc5424(s, i + v[0].length, Number(v[1]), r)
  }
  return rfc3164(s, i, entryTs, r)
}

function rfc5424(s: string, i: number, version: number, r: SyslogRecord): SyslogRecord {
  r.Version = version
  let w = word(s, i)
  if (!w) return r
  if (w[0] !== '-') {
    const ms = rfc3339(w[0])
    if (ms === null) return r
    r.Timestamp = new TimeValue(ms)
  }
  i = w[1]
  for (const key of ['Hostname', 'Appname', 'ProcID', 'MsgID'] as const) {
    w = word(s, i)
    if (!w) return r
    if (w[0] === '') return r
    const v = nil(w[0])
    if (v !== undefined) r[key] = v
    i = w[1]
  }
  if (s[i] === '-') {
    i++
  } else if (s[i] === '[') {
    const sd = structuredData(s, i)
    if (!sd) return r
    r.sd = sd.elements
    r.StructuredData = s.slice(i, sd.end)
    i = sd.end
  } else return r
  if (s[i] === ' ') {
    let msg = s.slice(i + 1)
    if (msg.startsWith('\uFEFF')) msg = msg.slice(1)
    if (msg !== '') r.Message = msg
  }
  return r
}

/** RFC 5424 STRUCTURED-DATA at `i` (one or more `[ID name="value" ...]`), or null when malformed. */
function structuredData(s: string, i: number): { elements: SDElement[]; end: number } | null {
  const elements: SDElement[] = []
  while (s[i] === '[') {
    i++
    let idEnd = i
    while (idEnd < s.length && s[idEnd] !== ' ' && s[idEnd] !== ']') idEnd++
    if (idEnd === i || idEnd === s.length) return null
    const el: SDElement = { id: s.slice(i, idEnd), params: [] }
    i = idEnd
    while (s[i] === ' ') {
      i++
      let eq = i
      while (eq < s.length && s[eq] !== '=' && s[eq] !== ' ' && s[eq] !== ']' && s[eq] !== '"') eq++
      if (eq === i || s[eq] !== '=' || s[eq + 1] !== '"') return null
      const name = s.slice(i, eq)
      i = eq + 2
      let value = ''
      for (;;) {
        if (i >= s.length) return null
        const c = s[i]!
        if (c === '"') break
        if (c === '\\' && (s[i + 1] === '"' || s[i + 1] === '\\' || s[i + 1] === ']')) {
          value += s[i + 1]
          i += 2
        } else {
          value += c
          i++
        }
      }
      i++
      el.params.push([name, value])
    }
    if (s[i] !== ']') return null
    i++
    elements.push(el)
  }
  return elements.length ? { elements, end: i } : null
}

function rfc3164(s: string, i: number, entryTs: number, r: SyslogRecord): SyslogRecord {
  const rest = s.slice(i)
  const bsd = BSD_TIME.exec(rest)
  if (bsd) {
    const month = MONTHS.indexOf(bsd[1]!)
    if (month < 0) return r
    const year = new Date(entryTs).getUTCFullYear()
    const at = (y: number) => Date.UTC(y, month, Number(bsd[2]!.trim()), Number(bsd[3]), Number(bsd[4]), Number(bsd[5]), bsd[6] ? Math.floor(Number(`0${bsd[6]}`) * 1000) : 0)
    let ms = at(year)
    if (ms > entryTs + 86_400_000) ms = at(year - 1)
    r.Timestamp = new TimeValue(ms)
    i += bsd[0].length + 1
  } else {
    const w = word(s, i)
    const ms = w ? rfc3339(w[0]) : null
    if (ms === null) {
      // No timestamp: what follows is the message (RFC 3164 4.3.3).
      if (rest !== '') r.Message = rest
      return r
    }
    r.Timestamp = new TimeValue(ms)
    i = w![1]
  }
  let w = word(s, i)
  if (!w) return r
  // A TAG right after the time: the message has no HOSTNAME.
  if (!TAG.test(w[0])) {
    if (w[0] !== '') r.Hostname = w[0]
    i = w[1]
    w = word(s, i)
    if (!w) return r
  }
  const tag = TAG.exec(w[0])
  if (tag) {
    r.Appname = tag[1]!
    if (tag[2] !== undefined) r.ProcID = tag[2]
    i = w[1]
  }
  const msg = s.slice(i)
  if (msg !== '') r.Message = msg
  return r
}

/** An RFC 3164 TAG with its colon: `sshd[123]:` or `su:`. */
const TAG = /^([^\s[\]:]{1,64})(?:\[([^\]\s]*)\])?:$/

type Field =
  | { kind: 'plain'; name: Exclude<keyof SyslogRecord, 'sd'> }
  | { kind: 'sdid' }
  | { kind: 'param'; id?: string; param: string }

export const SYSLOG_FIELDS = ['Priority', 'Facility', 'Severity', 'Version', 'Timestamp', 'Hostname', 'Appname', 'ProcID', 'MsgID', 'Message', 'StructuredData'] as const

function fieldOf(source: string): Field | null {
  if ((SYSLOG_FIELDS as readonly string[]).includes(source)) return { kind: 'plain', name: source as (typeof SYSLOG_FIELDS)[number] }
  if (source === 'StructuredID') return { kind: 'sdid' }
  const m = /^Structured(?:\[([^\]]+)\])?\.(.+)$/.exec(source)
  return m ? { kind: 'param', id: m[1], param: m[2]! } : null
}

const defaultName = (source: string) => {
  const f = fieldOf(source)
  return f?.kind === 'param' ? f.param : source
}

function fieldValue(r: SyslogRecord, f: Field): Value | undefined {
  if (f.kind === 'plain') return r[f.name]
  if (f.kind === 'sdid') return r.sd?.[0]?.id
  for (const el of r.sd ?? []) {
    if (f.id !== undefined && el.id !== f.id) continue
    for (const [k, v] of el.params) if (k === f.param) return v
  }
  return undefined
}

/** The StructuredID filter: against every element's ID (see the header). */
function sdidPasses(x: Extraction, r: SyslogRecord): boolean {
  const ids = r.sd?.map((el) => el.id) ?? []
  const negated = x.filter!.op === '!=' || x.filter!.op === '!~'
  return negated ? ids.every((id) => x.filter!.test(id)) : ids.some((id) => x.filter!.test(id))
}

export const syslog: ModuleDef = {
  name: 'syslog',
  kind: 'extraction',
  info: 'Extracts the parts of RFC 5424 and RFC 3164 syslog messages: Priority, Facility, Severity, Version (numbers), Timestamp (a time), Hostname, Appname, ProcID, MsgID, Message, StructuredID, StructuredData, and structured-data parameters as Structured.<name> or Structured[<id>].<name>. Each may be filtered inline (==, !=, <, >, <=, >=, ~, !~) and renamed with as; -e reads a value instead of the entry.',
  examples: ['syslog Appname Severity | count by Appname,Severity', 'syslog Severity < 3 Hostname != "myhost"', 'syslog StructuredID Structured[ex@32473].foo as foo'],
  compile(call) {
    const { flags, rest } = readFlags(call, { withValue: ['e'] })
    const items = readExtractions(call, rest, defaultName)
    if (items.length === 0) throw argError(call, 'syslog needs a field to extract (Hostname, Appname, Severity, Message...)', call.end)
    const fields = items.map((x) => {
      const f = fieldOf(x.source)
      if (!f) throw argError(call, `unknown syslog field ${JSON.stringify(x.source)}: one of ${SYSLOG_FIELDS.join(', ')}, StructuredID, Structured.<name>`, x.token)
      return f
    })
    const source = flagValue(flags, 'e')
    // StructuredID filters are checked apart (every element), so the shared pass sees them without a filter.
    const shared = items.map((x, i) => (fields[i]!.kind === 'sdid' ? { ...x, filter: undefined } : x))
    const sdidChecks = items.filter((x, i) => fields[i]!.kind === 'sdid' && x.filter)
    return extractingModule({
      name: 'syslog',
      text: ['syslog', ...flagsText(flags, quote), ...extractionsText(items, defaultName)].join(' '),
      items: shared,
      source,
      stage: () => ({
        read(e, found) {
          const text = inputText(e, source)
          const r = text === undefined ? {} : parseSyslog(text, e.ts)
          for (const x of sdidChecks) {
            if (r.sd === undefined) {
              if (x.filter!.op !== '!=' && x.filter!.op !== '!~') return false
            } else if (!sdidPasses(x, r)) return false
          }
          for (let i = 0; i < items.length; i++) found[i] = fieldValue(r, fields[i]!)
        },
      }),
    })
  },
}
