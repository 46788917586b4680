// `quarry search export` of a search whose move to storage ends between the server's refusal (409, SAVING) and the
// CLI's next look at it (SAVED): the CLI must take the archive, not fail with "save it first". The real server cannot
// be made to lose that race on demand (a full-suite run hit it once), so a scripted server plays the two answers in
// that order; everything else is the real CLI as a subprocess.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAIN } from './cli'

const ID = '4522960925'
const ARCHIVE = new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3, 4])
let server: ReturnType<typeof Bun.serve>
let archiveAsks = 0
let state = 'DORMANT/BACKGROUNDED/SAVING'
const dir = mkdtempSync(join(tmpdir(), 'quarry-export-race-'))

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === `/api/searchctrl/${ID}/download/archive`) {
        // the first ask is refused while SAVING; the move ends right after it
        if (archiveAsks++ === 0) {
          state = 'DORMANT/SAVED'
          return Response.json({ Error: `search ${ID} is DORMANT/BACKGROUNDED/SAVING: only a saved search can be exported` }, { status: 409 })
        }
        return new Response(ARCHIVE, { headers: { 'content-type': 'application/gzip' } })
      }
      if (path === `/api/searchctrl/${ID}/details`) return Response.json({ ID, State: state, AttachedClients: 0 })
      if (path === '/api/searchctrl') return Response.json([{ ID, State: state, AttachedClients: 0 }])
      return Response.json({ Error: 'not found' }, { status: 404 })
    },
  })
})
afterAll(() => {
  server.stop(true)
  rmSync(dir, { recursive: true, force: true })
})

test('a search SAVED between the refusal and the next look is exported, not refused', async () => {
  const file = join(dir, 'out.tar.gz')
  const proc = Bun.spawn([process.execPath, 'run', MAIN, '--server', server.url.origin, '--token', 'a-token', 'search', 'export', ID, file], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, NO_COLOR: '1' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
  expect(archiveAsks).toBe(2)
  expect([...readFileSync(file)]).toEqual([...ARCHIVE])
}, 30_000)
