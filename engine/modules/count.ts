// count: the number of entries that reach it, emitted once at the end as the value `count`.
// (The stats shorthand with `by`, `over` and `as` replaces this: see modules/stats.ts once it exists.)
import type { ModuleDef } from '../module'
import { argError } from '../module'

export const count: ModuleDef = {
  name: 'count',
  kind: 'condensing',
  info: 'Counts the entries that reach it and emits one entry with the value count.',
  examples: ['count'],
  compile(call) {
    if (call.args.length > 0) throw argError(call, 'count takes no argument', call.args[0])
    return {
      name: 'count',
      kind: 'condensing',
      text: 'count',
      consumes: [],
      produces: ['count'],
      stateless: false,
      stage(env) {
        let n = 0
        return {
          push() {
            n++
          },
          flush(out) {
            out({ ts: env.end || Date.now(), tag: '', src: '', data: new Uint8Array(0), values: new Map([['count', n]]) })
          },
        }
      },
    }
  },
}
