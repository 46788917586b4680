// The CLI's writes to standard output and error (cli/stdio.ts): in order, whole, and quiet once the reader has gone.
import { expect, test } from 'bun:test'
import { join } from 'node:path'

const STDIO = join(import.meta.dir, 'stdio.ts')

function child(script: string) {
  return Bun.spawn([process.execPath, '-e', `const { writeOut, writeErr } = await import(${JSON.stringify(STDIO)});\n${script}`], { stdout: 'pipe', stderr: 'pipe' })
}

test('8 MiB of lines through a pipe arrive whole and in order, interleaved with Bun.write', async () => {
  const p = child(`for (let i = 0; i < 100000; i++) { writeOut(String(i).padStart(83, '.') + '\\n'); if (i % 10000 === 0) await Bun.write(Bun.stdout, 'bun ' + i + '\\n') }\nwriteErr('done\\n')`)
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  expect({ code, err }).toEqual({ code: 0, err: 'done\n' })
  const lines = out.split('\n').filter(Boolean)
  const expected: string[] = []
  for (let i = 0; i < 100000; i++) {
    expected.push(String(i).padStart(83, '.'))
    if (i % 10000 === 0) expected.push(`bun ${i}`)
  }
  expect(lines.length).toBe(expected.length)
  expect(lines).toEqual(expected)
})

test('a reader that goes away ends the output quietly: no error, exit 0, later writes to stderr still arrive', async () => {
  const p = child(`for (let i = 0; i < 200000; i++) writeOut('x'.repeat(99) + '\\n')\nwriteErr('after\\n')`)
  const reader = p.stdout.getReader()
  const first = await reader.read()
  expect(first.value!.byteLength).toBeGreaterThan(0)
  await reader.cancel()
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited])
  expect({ code, err }).toEqual({ code: 0, err: 'after\n' })
})
