// Members of a JSON request body kept byte for byte (dashboard Data, library Metadata; docs/api.md "Dashboards and the
// search library"): JSON.parse would round large integers (12345678901234567890123) and a re-serialisation would not
// keep the client's spelling, so the exact text of such a member is cut out of the raw body and spliced back into
// answers. Only bodies JSON.parse accepted are scanned, so a cut-out text is always exactly one valid JSON value and
// splicing it cannot add members to an answer.
import { rawBody } from './body'
import { Errors } from './errors'
import { checkJsonShape } from './json-shape'
import { JSON_TYPE } from './wire'

const WS = new Set([' ', '\t', '\n', '\r'])

class Scanner {
  i = 0
  constructor(readonly s: string) {}
  ws() {
    while (this.i < this.s.length && WS.has(this.s[this.i]!)) this.i++
  }
  expect(c: string) {
    if (this.s[this.i] !== c) throw new SyntaxError(`expected ${c} at ${this.i}`)
    this.i++
  }
  /** Skips a string token starting at the opening quote; answers its text with the quotes. */
  string(): string {
    const start = this.i
    this.expect('"')
    for (;;) {
      const c = this.s[this.i++]
      if (c === undefined) throw new SyntaxError('unterminated string')
      if (c === '\\') this.i++
      else if (c === '"') return this.s.slice(start, this.i)
    }
  }
  /** Skips one value of any kind. */
  value() {
    const c = this.s[this.i]
    if (c === '"') return void this.string()
    if (c === '{' || c === '[') {
      let depth = 0
      do {
        const d = this.s[this.i]
        if (d === undefined) throw new SyntaxError('unterminated value')
        if (d === '"') {
          this.string()
          continue
        }
        if (d === '{' || d === '[') depth++
        else if (d === '}' || d === ']') depth--
        this.i++
      } while (depth > 0)
      return
    }
    const start = this.i
    while (this.i < this.s.length && !WS.has(this.s[this.i]!) && !',}]'.includes(this.s[this.i]!)) this.i++
    if (this.i === start) throw new SyntaxError(`expected a value at ${start}`)
  }
}

/**
 * The exact text of the named members of the JSON object `text` (which JSON.parse accepted), keyed by name.
 * Keys are compared decoded (`"D\u0061ta"` is `Data`) and a repeated key's last value wins, as with JSON.parse,
 * so the text always belongs to the value the parsed body holds. Undefined when `text` is not a JSON object.
 */
export function rawMembers(text: string, names: readonly string[]): Map<string, string> | undefined {
  const found = new Map<string, string>()
  const p = new Scanner(text)
  try {
    p.ws()
    p.expect('{')
    p.ws()
    if (p.s[p.i] === '}') return found
    for (;;) {
      p.ws()
      const key = JSON.parse(p.string()) as string
      p.ws()
      p.expect(':')
      p.ws()
      const start = p.i
      p.value()
      if (names.includes(key)) found.set(key, text.slice(start, p.i))
      p.ws()
      if (p.s[p.i] === ',') {
        p.i++
        continue
      }
      p.expect('}')
      return found
    }
  } catch (e) {
    if (e instanceof SyntaxError) return undefined
    throw e
  }
}

/**
 * The JSON text of `head` followed by members whose values are JSON text already (spliced verbatim, in the
 * given order); members whose text is undefined are left out.
 */
export function jsonWithRaw(head: Record<string, unknown>, raw: readonly (readonly [string, string | undefined])[]): string {
  let out = JSON.stringify(head).slice(0, -1)
  for (const [name, text] of raw) {
    if (text === undefined) continue
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(name)}:${text}`
  }
  return `${out}}`
}

/**
 * Answers JSON text built by jsonWithRaw with a JSON content type (Elysia would send a string as text/plain).
 * Such routes declare no response schema: the text is the answer, checked by their tests.
 */
export function rawJson(set: { headers: Record<string, unknown> }, text: string): string {
  set.headers['content-type'] = JSON_TYPE
  return text
}

/**
 * The exact text of member `name` of the request's JSON body, for a member the parsed body holds, to be stored.
 * 400 when the body was not JSON text (a form cannot carry a JSON member), and when the member is deeper or
 * larger than stored JSON may be (server/http/json-shape.ts).
 */
export function rawBodyMember(request: Request, name: string): string {
  const text = rawMembers(rawBody(request), [name])?.get(name)
  if (text === undefined) throw Errors.badRequest(`${name} must be sent in a JSON body`)
  checkJsonShape(text, name)
  return text
}
