// A stand-in for the stats module in tests of the renderers through the real app, registered only while the engine
// has no `stats` of its own (imported before the app, so that the query compiler sees it): `stats count [sum(x)]
// [by k ...] [over d]`, emitting condensed entries (one per key and window; one per key over the whole range
// without `over`) with count and sum aggregates of this file's own kinds. Tests written against it run unchanged on
// the real module.
import type { Aggregate, AggregateKind } from '../engine/aggregate'
import { valueOf } from '../engine/entry'
import { type ModuleDef, argError } from '../engine/module'
import { MODULES } from '../engine/registry'
import { registerAggregateKinds } from '../engine/render/records'
import { type Value, parseDuration, toNumber } from '../engine/value'

class Count implements Aggregate {
  readonly op = 'standin.count'
  constructor(public n = 0) {}
  add() {
    this.n++
  }
  merge(o: Aggregate) {
    this.n += (o as Count).n
  }
  result() {
    return this.n
  }
  save() {
    return this.n
  }
}
class Sum implements Aggregate {
  readonly op = 'standin.sum'
  constructor(
    public s = 0,
    public n = 0,
  ) {}
  add(v: Value | undefined) {
    const x = toNumber(v)
    if (x === null) return
    this.s += x
    this.n++
  }
  merge(o: Aggregate) {
    this.s += (o as unknown as Sum).s
    this.n += (o as unknown as { n: number }).n
  }
  result() {
    return this.s
  }
  save() {
    return [this.s, this.n]
  }
}
const kinds: AggregateKind[] = [
  { op: 'standin.count', create: () => new Count(), load: (s) => new Count(Number(s)) },
  { op: 'standin.sum', create: () => new Sum(), load: (s) => new Sum(Number((s as number[])[0]), Number((s as number[])[1])) },
]

const stats: ModuleDef = {
  name: 'stats',
  kind: 'condensing',
  info: 'test stand-in',
  examples: [],
  compile(call) {
    const ops: { name: string; of?: string }[] = []
    const by: string[] = []
    let over = 0
    let mode: 'ops' | 'by' = 'ops'
    for (let i = 0; i < call.args.length; i++) {
      const t = call.args[i]!.text
      if (t === 'by') mode = 'by'
      else if (t === 'over') {
        over = (parseDuration(call.args[++i]?.text ?? '') ?? 0) / 1e6
        if (!over) throw argError(call, 'over needs a duration', call.args[i])
      } else if (mode === 'by') by.push(t)
      else if (t === 'count') ops.push({ name: 'count' })
      else if (/^sum\((\w+)\)$/.test(t)) ops.push({ name: 'sum', of: /^sum\((\w+)\)$/.exec(t)![1] })
      else throw argError(call, `stand-in: unknown ${t}`, call.args[i])
    }
    return {
      name: 'stats',
      kind: 'condensing',
      text: `stats ${call.argText}`,
      consumes: by,
      produces: ops.map((o) => o.name),
      stateless: false,
      stage(env) {
        const groups = new Map<string, { start: number; keys: (Value | undefined)[]; aggs: Map<string, Aggregate> }>()
        return {
          push(e) {
            const start = over > 0 ? Math.floor(e.ts / over) * over : env.start
            const keys = by.map((k) => valueOf(e, k))
            const id = JSON.stringify([start, ...keys.map(String)])
            const g = groups.get(id) ?? { start, keys, aggs: new Map<string, Aggregate>(ops.map((o) => [o.name, o.name === 'count' ? new Count() : new Sum()])) }
            groups.set(id, g)
            for (const o of ops) g.aggs.get(o.name)!.add(o.of ? valueOf(e, o.of) : undefined)
          },
          flush(out) {
            for (const g of [...groups.values()].sort((a, b) => a.start - b.start)) {
              const values = new Map<string, Value>()
              by.forEach((k, i) => g.keys[i] !== undefined && values.set(k, g.keys[i]!))
              for (const [n, a] of g.aggs) values.set(n, a.result())
              out({ ts: g.start, tag: '', src: '', data: new Uint8Array(0), values, condensed: { start: g.start, span: over, by, aggregates: g.aggs } })
            }
          },
        }
      },
    }
  },
}

if (!MODULES.some((m) => m.name === 'stats')) {
  registerAggregateKinds(kinds)
  ;(MODULES as ModuleDef[]).push(stats)
}
