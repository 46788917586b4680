// first and last (gravwell/wiki search/firstlast/firstlast.md): the first or the last entry, or one per distinct
// combination of the named values.
//   first [-maxtracked <n>] [-maxsize <MB>] [<name>...]
//   last  [-maxtracked <n>] [-maxsize <MB>] [<name>...]
// First and last are in the order entries reach the module: by time, unless a sort comes before. Keys are read as
// unique reads them (unique.ts: the values' texts; an entry that lacks a named value has no key and is dropped).
// first passes each key's first entry as it comes (without names, the scan ends after the first entry); last holds
// each key's latest entry and passes them on at the end, in the order of their arrival.
// Memory: at most -maxtracked keys (default RunEnv.maxTracked) and -maxsize MB (default DEFAULT_MAX_KEY_MB) of keys,
// and for last of the data of the entries held; past either the search ends with a SearchLimitError.
import type { Entry } from '../entry'
import { SearchLimitError } from '../errors'
import { FLUSH_SLICE, type ModuleDef } from '../module'
import { KeyTracker, keyOf, readKeyOptions } from './unique'

export const first: ModuleDef = {
  name: 'first',
  kind: 'condensing',
  info: 'Passes the first entry, or the first of each distinct combination of the named values.',
  examples: ['first', 'first host'],
  compile(call) {
    const opts = readKeyOptions(call, false)
    return {
      name: 'first',
      kind: 'condensing',
      text: ['first', ...opts.text].join(' '),
      consumes: opts.names,
      produces: [],
      stateless: false,
      stage(env) {
        const keys = new KeyTracker('first', opts.maxTracked ?? env.maxTracked, opts.maxBytes)
        let passed = false
        return {
          push(e, out) {
            if (opts.names.length === 0) {
              if (passed) return
              passed = true
              out(e)
              return
            }
            const key = keyOf(e, opts.names)
            if (key !== null && keys.add(key)) out(e)
          },
          done: () => opts.names.length === 0 && passed,
        }
      },
    }
  },
}

export const last: ModuleDef = {
  name: 'last',
  kind: 'condensing',
  info: 'Passes the last entry, or the last of each distinct combination of the named values, once the input has ended.',
  examples: ['last', 'last host'],
  compile(call) {
    const opts = readKeyOptions(call, false)
    return {
      name: 'last',
      kind: 'condensing',
      text: ['last', ...opts.text].join(' '),
      consumes: opts.names,
      produces: [],
      stateless: false,
      stage(env) {
        const maxTracked = opts.maxTracked ?? env.maxTracked
        // Key → latest entry; deleting and setting again keeps the Map in the order of each key's latest arrival.
        const held = new Map<string, Entry>()
        let bytes = 0
        return {
          push(e) {
            const key = opts.names.length === 0 ? '' : keyOf(e, opts.names)
            if (key === null) return
            const before = held.get(key)
            if (before) {
              bytes -= before.data.byteLength
              held.delete(key)
            } else {
              if (held.size >= maxTracked)
                throw new SearchLimitError(`last: more than ${maxTracked} distinct keys (the bound -maxtracked sets): raise -maxtracked, or narrow the search`)
              bytes += key.length * 2
            }
            bytes += e.data.byteLength
            if (bytes > opts.maxBytes)
              throw new SearchLimitError(`last: its keys and entries take more than ${opts.maxBytes / 1024 / 1024} MB (the bound -maxsize sets): raise -maxsize, or narrow the search`)
            held.set(key, e)
          },
          *flush(out) {
            let sent = 0
            for (const e of held.values()) {
              out(e)
              if (++sent % FLUSH_SLICE === 0) yield
            }
            held.clear()
          },
        }
      },
    }
  },
}
