// The memory this process may use: the container's limit (cgroup v2 memory.max, or v1's limit_in_bytes) where one is
// set, else the machine's. Caches sized from it (the decoded-segment cache) stay a fraction of what the process may
// really use: os.totalmem() alone reports the host's memory inside a container limited to far less.
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'

/** cgroup files holding the limit, v2 first; a limit at or above the machine's means none. */
const LIMIT_FILES = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']

export function memoryLimit(read: (path: string) => string = (p) => readFileSync(p, 'utf8')): number {
  const machine = totalmem()
  for (const file of LIMIT_FILES) {
    let text: string
    try {
      text = read(file).trim()
    } catch {
      continue
    }
    const bytes = Number(text)
    if (text !== 'max' && Number.isSafeInteger(bytes) && bytes > 0 && bytes < machine) return bytes
  }
  return machine
}
