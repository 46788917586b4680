// Cold start (issue 17): a server on the disk blob store that has run no search does not load the S3 client (minio,
// over 100 ms to import), the archive writer's tar-stream or the regex engine re2js; they load when first used. The
// real start (server/main.ts main) runs in a child process, whose module registry then lists what was loaded.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** Runs `script` (after a real start of the server on a fresh data directory) in a child; answers its output lines. */
async function afterStart(script: string): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-lazy-'))
  dirs.push(dataDir)
  const code = `
    const { main } = await import(${JSON.stringify(join(ROOT, 'server', 'main.ts'))})
    await main({ ...process.env, QUARRY_DATA_DIR: ${JSON.stringify(dataDir)}, QUARRY_LISTEN: '127.0.0.1:0', QUARRY_ADMIN_PASSWORD: 'lazy-imports-password', QUARRY_LOG_LEVEL: 'warn' })
    const loaded = () => Object.keys(require.cache).filter((k) => /node_modules\\/(minio|tar-stream|re2js)\\//.test(k) && !k.endsWith('.umd.js'))
    ${script}
    process.exit(0)`
  const proc = Bun.spawn([process.execPath, '-e', code], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '', HOME: tmpdir() } })
  const [out, err, exit] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (exit !== 0) throw new Error(`the child failed (${exit}): ${err}`)
  return out.trim().split('\n').filter((l) => l.startsWith('{'))
}

test('a started server on the disk store has not loaded minio, tar-stream or re2js; a regex compiled loads re2js only', async () => {
  const lines = await afterStart(`
    console.log(JSON.stringify({ atStart: loaded() }))
    const { compileRegex } = await import(${JSON.stringify(join(ROOT, 'server', 'search', 'query.ts'))})
    if (!compileRegex('a+b').test('xaab')) throw new Error('the regex did not match')
    console.log(JSON.stringify({ afterRegex: loaded().map((k) => k.split('node_modules/')[1].split('/')[0]) }))`)
  expect(lines.map((l) => JSON.parse(l))).toEqual([{ atStart: [] }, { afterRegex: expect.arrayContaining(['re2js']) }])
  expect(JSON.parse(lines[1]!).afterRegex.every((m: string) => m === 're2js')).toBe(true)
}, 90_000)
