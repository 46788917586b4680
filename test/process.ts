// The real server process in tests: wait until it listens, keeping its log lines.
import type { Subprocess } from 'bun'

/** Keeps reading stdout (a closed pipe would break the server's logging) and answers the base URL once listening. */
export function listening(proc: Subprocess<any, 'pipe', any>): Promise<{ url: string; lines: string[] }> {
  const lines: string[] = []
  return new Promise((resolve, reject) => {
    void (async () => {
      const decoder = new TextDecoder()
      let buffered = ''
      for await (const chunk of proc.stdout) {
        buffered += decoder.decode(chunk)
        const parts = buffered.split('\n')
        buffered = parts.pop()!
        for (const line of parts) {
          lines.push(line)
          const entry = JSON.parse(line)
          if (entry.msg === 'listening') resolve({ url: entry.address, lines })
        }
      }
      reject(new Error('server exited before listening'))
    })()
  })
}
