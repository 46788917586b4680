// The renderers, by name (registry.ts lists them with the other modules).
import { argError, type ModuleDef } from '../module'
import { textRenderer } from './renderer'

const entries = (name: 'text' | 'raw', info: string): ModuleDef => ({
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
]
