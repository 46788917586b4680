// require (gravwell/wiki search/require/require.md): passes entries by which values they have.
//   require [-s] [-v] <name> ...
// By default an entry passes when it has at least one of the values; -s (strict) needs all of them; -v passes the
// entries that have none of them (it implies -s, as the wiki says: "drop all entries that have any of these"). The
// built-ins (TAG, SRC, TIMESTAMP, DATA) are always there.
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, flagsText, readFlags } from '../module'

export const requireModule: ModuleDef = {
  name: 'require',
  kind: 'filter',
  info: 'Passes entries that have at least one of the named values; -s needs all of them, -v passes those that have none of them.',
  examples: ['require SrcPort', 'require -s SrcPort SrcIP', 'require -v A'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['s', 'v'] })
    if (rest.length === 0) throw argError(call, 'require needs the name of a value', call.end)
    for (const t of rest) if (t.text === '') throw argError(call, 'a name cannot be empty', t)
    const names = rest.map((t) => t.text)
    const strict = flags.has('s')
    const invert = flags.has('v')
    return {
      name: 'require',
      kind: 'filter',
      text: ['require', ...flagsText(flags, quote), ...names.map(quote)].join(' '),
      consumes: [...new Set(names)],
      produces: [],
      stateless: true,
      stage() {
        const has = (e: Parameters<typeof valueOf>[0], n: string) => valueOf(e, n) !== undefined
        return {
          push(e, out) {
            const pass = invert ? !names.some((n) => has(e, n)) : strict ? names.every((n) => has(e, n)) : names.some((n) => has(e, n))
            if (pass) out(e)
          },
        }
      },
    }
  },
}
