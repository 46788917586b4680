// time (gravwell/wiki search/time/time.md): converts times to text and text to times.
//   time [-iformat <layout>] [-oformat <layout>] [-tz <zone>] <source> [<destination>]
// A source that is a time (TIMESTAMP, or a time a module set) is copied to the destination, as text written with
// -oformat when it is given. A source that is text (or bytes, or a number read as Unix seconds) is read as a time:
// with the Go layout -iformat, or else by trying the common layouts (timelayout.ts AUTO_LAYOUTS: RFC 3339, RFC 1123,
// ANSI C, Apache, syslog...) and Unix times; the destination is then a time, or text with -oformat. Layouts are Go's
// ("Mon Jan 2 15:04:05 MST 2006"). -tz names an IANA zone (`America/Chicago`; default UTC) used to write times and to
// read text that has no zone. The destination defaults to the source. A source the entry lacks, or text that does not
// read as a time, sets nothing and the entry passes. Times are kept to the millisecond.
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, readFlags } from '../module'
import type { Token } from '../lex'
import { TimeValue, valueText } from '../value'
import { formatTime, parseAuto, parseLayout, parseTime, validZone } from './timelayout'

export const time: ModuleDef = {
  name: 'time',
  kind: 'processing',
  info: 'Converts times to text and text to times: time [-oformat <layout>] [-iformat <layout>] [-tz <zone>] <source> [<destination>]. Layouts are Go\'s ("Mon Jan _2 15:04:05 2006 MST"); text is read with -iformat or by trying the common formats; -tz gives the zone for writing times and for text without a zone.',
  examples: ['time -oformat "Mon Jan _2 15:04:05 2006 MST" -tz "America/Chicago" TIMESTAMP foo', 'time tsString extractedTS', 'time -iformat "02/Jan/2006:15:04:05 -0700" ts when'],
  compile(call) {
    const { flags, rest } = readFlags(call, { withValue: ['iformat', 'oformat', 'tz'] })
    const get = (n: string) => flags.get(n) as Token | undefined
    const tzToken = get('tz')
    const tz = tzToken?.text ?? 'UTC'
    if (!validZone(tz)) throw argError(call, `unknown time zone ${JSON.stringify(tz)}: an IANA name such as America/Chicago, or UTC`, tzToken)
    for (const n of ['iformat', 'oformat']) if (get(n)?.text === '') throw argError(call, `-${n} needs a layout`, get(n))
    const input = get('iformat') ? parseLayout(get('iformat')!.text) : undefined
    const output = get('oformat') ? parseLayout(get('oformat')!.text) : undefined
    if (rest.length === 0) throw argError(call, 'time needs the value to convert', call.end)
    if (rest.length > 2) throw argError(call, 'time takes a source and a destination', rest[2])
    for (const t of rest) if (t.text === '') throw argError(call, 'a name cannot be empty', t)
    const source = rest[0]!.text
    const destination = rest[1]?.text ?? source
    const text = ['time', ...['iformat', 'oformat', 'tz'].flatMap((n) => (get(n) ? [`-${n}`, `"${get(n)!.text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`] : [])), ...rest.map((t) => quote(t.text))].join(' ')
    return {
      name: 'time',
      kind: 'processing',
      text,
      consumes: [source],
      produces: [destination],
      stateless: true,
      stage() {
        return {
          push(e, out) {
            const v = valueOf(e, source)
            let ms: number | null = null
            if (v instanceof TimeValue) ms = v.ms
            else if (typeof v === 'number') ms = Math.round(v * 1000)
            else if (typeof v === 'string' || v instanceof Uint8Array) {
              const s = valueText(v)
              const year = new Date(e.ts).getUTCFullYear()
              ms = s.length > 256 ? null : input ? parseTime(s, input, tz, year) : parseAuto(s, tz, year)
            }
            if (ms !== null && Number.isFinite(ms)) e.values.set(destination, output ? formatTime(ms, output, tz) : new TimeValue(ms))
            out(e)
          },
        }
      },
    }
  },
}
