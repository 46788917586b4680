// Cluster events travel as PostgreSQL NOTIFY payloads, which must stay under 8000 bytes whatever the number of ids.
import { describe, expect, test } from 'bun:test'
import { type ClusterEvent, payloadSized } from './events'

describe('payloadSized', () => {
  test('a list of ids is split into parts whose payloads stay under the limit, every id once, in order', () => {
    const ids = Array.from({ length: 2000 }, () => crypto.randomUUID())
    const parts = payloadSized({ kind: 'sessions-ended', ids })
    expect(parts.length).toBeGreaterThan(1)
    for (const p of parts) {
      expect(p.kind).toBe('sessions-ended')
      expect(JSON.stringify({ from: 'a-replica-id-of-some-length', event: p }).length).toBeLessThan(8000)
    }
    expect(parts.flatMap((p) => (p as { ids: string[] }).ids)).toEqual(ids)
  })
  test('a short list and the other kinds go as they are', () => {
    const few: ClusterEvent = { kind: 'tokens-ended', ids: ['1', '2'] }
    const replaced: ClusterEvent = { kind: 'session-replaced', from: 'a', to: 'b' }
    expect(payloadSized(few)).toEqual([few])
    expect(payloadSized(replaced)).toEqual([replaced])
    expect(payloadSized({ kind: 'sessions-ended', ids: [] })).toEqual([])
  })
})
