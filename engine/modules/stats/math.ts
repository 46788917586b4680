// The math modules (gravwell/wiki search/math/math.md): count, sum, mean, min, max, stddev, variance, each a `stats`
// with one operation (stats.ts: keys, windows, modes, -maxtracked, DATA and -b are the same).
//   <op> [-b] [-maxtracked n] [<value>] [as <name>] [by <value>...] [over <duration>]
// `sum Length by SrcMAC` is `stats sum(Length) by SrcMAC`; `count by command` is `stats count by command`. Without
// a value, sum, mean, min, max, stddev and variance read DATA and count counts entries; `count x` counts the entries
// that have x. The result is named after the module unless `as` renames it (`as` may also follow the by list).
// A query that ends in a plain `count` and names no renderer answers one record {"Count": n} (query.ts).
import { type Token, quote } from '../../lex'
import { type ModuleDef, argError, flagsText, readFlags } from '../../module'
import type { ModuleCall } from '../../parse'
import { MAX_TRACKED_LIMIT, type StatsOp, type StatsSpec, byNames, compileStats, quoteName, readMaxTracked, readOver } from './stats'

const KEYWORDS = new Set(['by', 'as', 'over'])

function readShorthand(call: ModuleCall, op: string, tokens: Token[]): { spec: Omit<StatsSpec, 'keepBody' | 'maxTracked'>; text: string[] } {
  let i = 0
  const isWord = (t: Token | undefined, w: string) => t?.kind === 'word' && t.text === w
  let source: Token | undefined
  if (tokens[0] && !(tokens[0].kind === 'word' && KEYWORDS.has(tokens[0].text))) {
    source = tokens[0]
    i++
  }
  let as: string | undefined
  const readAs = () => {
    if (!isWord(tokens[i], 'as')) return
    if (as !== undefined) throw argError(call, `${op} takes one "as"`, tokens[i])
    const name = tokens[i + 1]
    if (!name) throw argError(call, '"as" needs a name', call.end)
    as = name.text
    i += 2
  }
  readAs()
  let by: string[] | undefined
  if (isWord(tokens[i], 'by')) {
    const at = tokens[i]!
    i++
    by = []
    while (i < tokens.length && !isWord(tokens[i], 'over') && !isWord(tokens[i], 'as')) by.push(...byNames(tokens[i++]!))
    if (by.length === 0) throw argError(call, '"by" needs at least one value name', tokens[i] ?? call.end)
    if (new Set(by).size !== by.length) throw argError(call, 'a "by" list names a value twice', at)
  }
  readAs()
  let over: StatsSpec['over']
  if (isWord(tokens[i], 'over')) {
    over = readOver(call, tokens[i + 1])
    i += 2
  }
  if (i < tokens.length) throw argError(call, `unexpected ${JSON.stringify(tokens[i]!.text)}: ${op} takes [value] [as name] [by values...] [over duration]`, tokens[i])
  const statsOp: StatsOp = {
    op,
    source: source?.text ?? (op === 'count' ? undefined : 'DATA'),
    sourceWritten: source !== undefined,
    as: as ?? op,
    by: by ?? [],
    writtenBy: by,
    token: { kind: 'word', text: op, pos: call.pos, end: call.pos + op.length },
  }
  if (statsOp.by.includes(statsOp.as)) throw argError(call, `the result ${JSON.stringify(statsOp.as)} has the name of one of its keys: name it with "as"`, statsOp.token)
  const text = [
    ...(source ? [KEYWORDS.has(source.text) ? `"${source.text}"` : quote(source.text)] : []),
    ...(as !== undefined && as !== op ? ['as', quote(as)] : []),
    ...(by ? ['by', ...by.map(quoteName)] : []),
    ...(over ? ['over', over.text] : []),
  ]
  return { spec: { ops: [statsOp], over }, text }
}

const INFO: Record<string, string> = {
  count: 'Counts the entries (or those that have a value: count x), by keys and time window: count by host over 5m.',
  sum: 'Sums a value (DATA without one), by keys and time window: sum bytes by host.',
  mean: 'The mean of a value, by keys and time window: mean ms by path.',
  min: 'The least value seen, by keys and time window: min rpm by SRC.',
  max: 'The greatest value seen, by keys and time window: max rpm by SRC.',
  stddev: 'The standard deviation (population) of a value, by keys and time window: stddev ms.',
  variance: 'The variance (population) of a value, by keys and time window: variance throttle.',
}

function shorthand(op: string): ModuleDef {
  return {
    name: op,
    kind: 'condensing',
    info: `${INFO[op]} The stats operation ${op} as a module of its own; -maxtracked n bounds the keys held (default 1000000, at most ${MAX_TRACKED_LIMIT}).`,
    examples: op === 'count' ? ['count', 'count by host', 'count -maxtracked 5000 by DstIP over 1m'] : [`${op} bytes by host`, `${op} ms over 5m`],
    compile(call) {
      const { flags, rest } = readFlags(call, { bool: ['b'], withValue: ['maxtracked'] })
      const maxTracked = readMaxTracked(call, flags.get('maxtracked'))
      const { spec, text } = readShorthand(call, op, rest)
      return compileStats(op, [op, ...flagsText(flags, quote), ...text].join(' '), { ...spec, keepBody: flags.has('b'), maxTracked })
    },
  }
}

export const count = shorthand('count')
export const sum = shorthand('sum')
export const mean = shorthand('mean')
export const min = shorthand('min')
export const max = shorthand('max')
export const stddev = shorthand('stddev')
export const variance = shorthand('variance')

export const mathModules: ModuleDef[] = [count, sum, mean, min, max, stddev, variance]
