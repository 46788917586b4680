// The renderers, by name (registry.ts lists them with the other modules).
import { argError, type ModuleDef } from '../module'
import { chart } from './chart'
import { fdg } from './fdg'
import { gauge, numbercard } from './gauge'
import { point2point } from './point2point'
import { textRenderer } from './renderer'
import { stackgraph } from './stackgraph'
import { table } from './table'
import { wordcloud } from './wordcloud'

// The renderers of entries: each entry as it is, with its values. hex and pcap are shown by the clients (hex bytes,
// decoded packets) from the same entries: the server answers them as raw does, and they download as text does.
const entries = (name: 'text' | 'raw' | 'hex' | 'pcap', info: string): ModuleDef => ({
  name,
  kind: 'render',
  info,
  examples: [`${name}`],
  compile(call, ctx) {
    if (call.args.length > 0) throw argError(call, `${name} takes no argument`, call.args[0])
    return textRenderer(ctx.previous, name)
  },
})

export const renderers: ModuleDef[] = [
  entries('text', 'Shows each entry as text, with its values.'),
  entries('raw', 'Shows each entry as it is stored, with its values (binary data as it is).'),
  entries('hex', 'Shows each entry as hexadecimal bytes, with its values.'),
  entries('pcap', 'Shows each entry as a network packet, with its values.'),
  table,
  chart,
  gauge,
  numbercard,
  stackgraph,
  wordcloud,
  fdg,
  point2point,
]
