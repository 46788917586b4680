// limit (gravwell/wiki search/limit/limit.md): passes the first n entries, then nothing: the scan ends early.
import type { ModuleDef } from '../module'
import { argError } from '../module'

const MAX_LIMIT = 1_000_000_000

export const limit: ModuleDef = {
  name: 'limit',
  kind: 'processing',
  info: 'Passes the first n entries and drops the rest; the search ends once n have passed.',
  examples: ['limit 10'],
  compile(call) {
    const a = call.args[0]
    if (!a) throw argError(call, 'limit needs a number of entries', call.end)
    if (call.args.length > 1) throw argError(call, 'limit takes one argument', call.args[1])
    if (a.kind !== 'word' || !/^\d+$/.test(a.text) || Number(a.text) < 1 || Number(a.text) > MAX_LIMIT)
      throw argError(call, `limit needs a whole number from 1 to ${MAX_LIMIT}`, a)
    const n = Number(a.text)
    return {
      name: 'limit',
      kind: 'processing',
      text: `limit ${n}`,
      consumes: [],
      produces: [],
      stateless: false,
      stage() {
        let seen = 0
        return {
          push(e, out) {
            if (seen >= n) return
            seen++
            out(e)
          },
          done: () => seen >= n,
        }
      },
    }
  },
}
