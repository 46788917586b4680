import { expect, test } from 'bun:test'
import { totalmem } from 'node:os'
import { memoryLimit } from './memory'

const files = (map: Record<string, string>) => (path: string) => {
  if (!(path in map)) throw new Error(`ENOENT: ${path}`)
  return map[path]!
}

test('the cgroup v2 limit, else v1, else the machine; "max" and limits above the machine mean none', () => {
  expect(memoryLimit(files({ '/sys/fs/cgroup/memory.max': '2147483648\n' }))).toBe(2 ** 31)
  expect(memoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '536870912' }))).toBe(2 ** 29)
  expect(memoryLimit(files({ '/sys/fs/cgroup/memory.max': 'max\n', '/sys/fs/cgroup/memory/memory.limit_in_bytes': '1073741824' }))).toBe(2 ** 30)
  // cgroup v1 without a limit reports a huge number
  expect(memoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712' }))).toBe(totalmem())
  expect(memoryLimit(files({ '/sys/fs/cgroup/memory.max': 'garbage' }))).toBe(totalmem())
  expect(memoryLimit(files({}))).toBe(totalmem())
})
