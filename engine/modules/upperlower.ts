// upper and lower (gravwell/wiki search/upperlower/upperlower.md): change the case of text.
//   upper [<name> ...]      lower [<name> ...]
// Without names the entry's DATA is changed; with names, those values. Text values and bytes change (Unicode case
// rules, so `ß` becomes `SS`); numbers, IPs, times and other typed values are left as they are, as is a value the
// entry lacks. Bytes that are not UTF-8 keep their bytes; only ASCII letters among them change.
import { quote } from '../lex'
import { type ModuleDef, argError } from '../module'
import type { Value } from '../value'

const fatal = new TextDecoder('utf-8', { fatal: true })
const encoder = new TextEncoder()

function bytesCase(d: Uint8Array, upper: boolean): Uint8Array {
  let ascii = true
  for (let i = 0; i < d.byteLength; i++)
    if (d[i]! >= 0x80) {
      ascii = false
      break
    }
  if (!ascii) {
    let text: string | undefined
    try {
      text = fatal.decode(d)
    } catch {
      text = undefined
    }
    if (text !== undefined) return encoder.encode(upper ? text.toUpperCase() : text.toLowerCase())
  }
  const out = new Uint8Array(d.byteLength)
  const [from, to, delta] = upper ? [97, 122, -32] : [65, 90, 32]
  for (let i = 0; i < d.byteLength; i++) {
    const b = d[i]!
    out[i] = b >= from && b <= to ? b + delta : b
  }
  return out
}

function caseModule(name: 'upper' | 'lower'): ModuleDef {
  const upper = name === 'upper'
  const change = (v: Value): Value => (typeof v === 'string' ? (upper ? v.toUpperCase() : v.toLowerCase()) : v instanceof Uint8Array ? bytesCase(v, upper) : v)
  return {
    name,
    kind: 'processing',
    info: `Changes text to ${upper ? 'upper' : 'lower'} case: the named values, or the entry's data when no name is given.`,
    examples: [name, `${name} region_code`],
    compile(call) {
      for (const t of call.args) if (t.text === '') throw argError(call, 'a name cannot be empty', t)
      const names = call.args.map((t) => t.text)
      return {
        name,
        kind: 'processing',
        text: [name, ...names.map(quote)].join(' '),
        consumes: names,
        produces: names.filter((n) => n !== 'DATA'),
        stateless: true,
        stage() {
          return {
            push(e, out) {
              if (names.length === 0) e.data = bytesCase(e.data, upper)
              for (const n of names) {
                if (n === 'DATA' && !e.values.has(n)) {
                  e.data = bytesCase(e.data, upper)
                  continue
                }
                const v = e.values.get(n)
                if (v !== undefined) e.values.set(n, change(v))
              }
              out(e)
            },
          }
        },
      }
    },
  }
}

export const upper = caseModule('upper')
export const lower = caseModule('lower')
