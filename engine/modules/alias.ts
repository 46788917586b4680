// alias (gravwell/wiki search/alias/alias.md): copies values under new names.
//   alias <source> <destination> [<source> <destination> ...]
// Each pair sets `destination` to the value of `source` (an enumerated value or a built-in: TAG, SRC, TIMESTAMP,
// DATA); a source the entry lacks sets nothing. Values are never changed in place, so later modules that change the
// copy leave the original as it was. Pairs are applied in order.
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError } from '../module'

export const alias: ModuleDef = {
  name: 'alias',
  kind: 'processing',
  info: 'Copies values under new names: alias <source> <destination>, one or more pairs. Later changes to the copy leave the original as it was.',
  examples: ['alias SrcIP src_host', 'alias foo bar X Y'],
  compile(call) {
    const args = call.args
    if (args.length === 0) throw argError(call, 'alias needs a value and its new name', call.end)
    if (args.length % 2 === 1) throw argError(call, `alias takes pairs of names: ${JSON.stringify(args.at(-1)!.text)} has no new name`, call.end)
    const pairs: [string, string][] = []
    for (let i = 0; i < args.length; i += 2) {
      for (const t of [args[i]!, args[i + 1]!]) if (t.text === '') throw argError(call, 'a name cannot be empty', t)
      pairs.push([args[i]!.text, args[i + 1]!.text])
    }
    return {
      name: 'alias',
      kind: 'processing',
      text: ['alias', ...pairs.flatMap(([a, b]) => [quote(a), quote(b)])].join(' '),
      consumes: [...new Set(pairs.map(([a]) => a))],
      produces: [...new Set(pairs.map(([, b]) => b))],
      stateless: true,
      stage() {
        return {
          push(e, out) {
            for (const [from, to] of pairs) {
              const v = valueOf(e, from)
              if (v !== undefined) e.values.set(to, v)
            }
            out(e)
          },
        }
      },
    }
  },
}
