// The single self-contained executable: `npm run build` (bun build --compile) makes one file that is both the
// server and the CLI. Built into a temporary directory, it starts the server and runs `quarry whoami` against it.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { listening } from './helpers'

const ROOT = join(import.meta.dir, '..')
const dir = mkdtempSync(join(tmpdir(), 'quarry-compile-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * Logs in as admin and uploads a resource larger than one hash batch (1 MiB), so that it is hashed on the SHA-1 worker
 * thread (the servers run with QUARRY_UPLOAD_HASH=worker, whatever the cores), which a build must carry (a worker
 * started from a file was missing from the executable: 500). Answers the
 * admin's headers for further requests.
 */
async function uploadsThroughTheHashWorker(url: string) {
  const jwt = ((await (await fetch(`${url}/api/login`, { method: 'POST', body: JSON.stringify({ User: 'admin', Pass: 'admin-password-1' }) })).json()) as { JWT: string }).JWT
  const auth = { Authorization: `Bearer ${jwt}` }
  const created = (await (await fetch(`${url}/api/resources`, { method: 'POST', headers: auth, body: JSON.stringify({ ResourceName: 'big' }) })).json()) as { GUID: string }
  const contents = new Uint8Array(3 * 1024 * 1024 + 7).map((_, i) => (i * 31) & 0xff)
  const form = new FormData()
  form.append('file', new Blob([contents]), 'big.bin')
  const put = await fetch(`${url}/api/resources/${created.GUID}/raw`, { method: 'PUT', headers: auth, body: form })
  expect({ status: put.status, body: await put.json() }).toMatchObject({
    status: 200,
    body: { Size: contents.byteLength, Hash: new Bun.CryptoHasher('sha1').update(contents).digest('base64') },
  })
  return auth
}

/**
 * Runs a regex filter and a regex extraction (named captures, an inline filter): both run on the match workers,
 * started from the worker's bundled source (engine and re2js), which a build must carry.
 */
async function searchesOnTheMatchWorkers(url: string, auth: Record<string, string>) {
  const entries = ['aab 200', 'xyz 404', 'ab 500'].map((d) => ({ Tag: 'web', Data: Buffer.from(d).toString('base64') }))
  expect((await fetch(`${url}/api/ingest/json`, { method: 'POST', headers: auth, body: JSON.stringify(entries) })).status).toBe(200)
  const search = async (query: string) => {
    const launch = await fetch(`${url}/api/searchctrl/launch`, { method: 'POST', headers: auth, body: JSON.stringify({ SearchString: query }) })
    expect(launch.status).toBe(200)
    const { SearchID } = (await launch.json()) as { SearchID: string }
    let d: { Finished: string; ItemCount: number; Error?: string } | undefined
    for (let i = 0; i < 200; i++) {
      d = (await (await fetch(`${url}/api/searchctrl/${SearchID}/details`, { headers: auth })).json()) as typeof d
      if (d!.Finished !== '0001-01-01T00:00:00Z') break
      await Bun.sleep(50)
    }
    const records = (await (await fetch(`${url}/api/searchctrl/${SearchID}/download/json`, { headers: auth })).json()) as { Enumerated?: unknown }[]
    return { details: d, enumerated: records.map((r) => r.Enumerated ?? null) }
  }
  expect(await search('tag=web regex "a+b "')).toMatchObject({ details: { ItemCount: 2, Error: '' }, enumerated: [null, null] })
  expect(await search('tag=web regex "(?P<word>[a-z]+) (?P<status>[0-9]+)" status != 404')).toMatchObject({
    details: { ItemCount: 2, Error: '' },
    enumerated: [
      [{ Name: 'word', ValueStr: 'aab' }, { Name: 'status', ValueStr: '200' }],
      [{ Name: 'word', ValueStr: 'ab' }, { Name: 'status', ValueStr: '500' }],
    ],
  })
}

/**
 * An OTLP protobuf export (the SDK's own serializer) and a Loki protobuf push compressed with snappy (winston-loki's
 * protobuf code): the decoders the server loads at the first such request (protobufjs, snappyjs) are in the build.
 */
async function shippersDecode(url: string, auth: Record<string, string>) {
  const resource = resourceFromAttributes({ 'service.name': 'built' })
  const record = { hrTime: [1_790_000_000, 0], hrTimeObserved: [1_790_000_000, 0], severityNumber: 9, severityText: 'INFO', body: 'otlp line', attributes: {}, droppedAttributesCount: 0, resource, instrumentationScope: { name: 's' } }
  const otlp = await fetch(`${url}/api/ingest/otlp/v1/logs`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-protobuf' }, body: ProtobufLogsSerializer.serializeRequest([record] as never)! })
  expect({ status: otlp.status, type: otlp.headers.get('content-type') }).toEqual({ status: 200, type: 'application/x-protobuf' })
  const require = createRequire(import.meta.url)
  const { logproto } = require('winston-loki/src/proto')
  const push = logproto.PushRequest.encode({ streams: [{ labels: '{job="built"}', entries: [{ timestamp: { seconds: 1_790_000_000, nanos: 0 }, line: 'loki line' }] }] }).finish()
  const loki = await fetch(`${url}/api/ingest/loki/api/v1/push`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-protobuf' }, body: require('snappy').compressSync(push) })
  expect(loki.status).toBe(204)
}

/** The web console's page and both its files (embedded in the executable; beside the bundle for the server bundle). */
async function servesTheConsole(url: string) {
  const page = await fetch(`${url}/`)
  const html = await page.text()
  expect({ status: page.status, csp: page.headers.get('content-security-policy')?.includes("script-src 'self'") }).toEqual({ status: 200, csp: true })
  const assets = [...html.matchAll(/\/assets\/(main-[a-z0-9]+\.(?:js|css))/g)].map((m) => m[1]!)
  expect(assets.length).toBe(2)
  for (const name of assets) {
    const r = await fetch(`${url}/assets/${name}`)
    expect({ status: r.status, size: (await r.arrayBuffer()).byteLength > 1000 }).toEqual({ status: 200, size: true })
  }
}

test('the compiled executable serves and answers `quarry whoami` about itself', async () => {
  const exe = join(dir, 'quarry')
  const build = Bun.spawnSync(['npm', 'run', '--silent', 'build'], { cwd: ROOT, env: { ...process.env, OUTFILE: exe }, stderr: 'pipe', stdout: 'pipe' })
  expect({ code: build.exitCode, stderr: build.stderr.toString() }).toEqual({ code: 0, stderr: expect.any(String) })
  expect(statSync(exe).mode & 0o111).not.toBe(0)

  // nothing from the source tree: run from an empty directory with only PATH and HOME
  const env = { PATH: process.env.PATH ?? '', HOME: dir, NO_COLOR: '1' }
  const server = Bun.spawn([exe, 'serve'], {
    cwd: dir,
    env: { ...env, QUARRY_LISTEN: '127.0.0.1:0', QUARRY_DATA_DIR: join(dir, 'data'), QUARRY_ADMIN_PASSWORD: 'admin-password-1', QUARRY_UPLOAD_HASH: 'worker' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  try {
    const { url } = await listening(server)
    const cli = (args: string[], stdin?: string) =>
      Bun.spawnSync([exe, '--server', url, ...args], { cwd: dir, env, stdin: stdin === undefined ? 'ignore' : Buffer.from(stdin) })
    const login = cli(['login', 'admin', '--password-stdin'], 'admin-password-1\n')
    expect({ code: login.exitCode, stderr: login.stderr.toString() }).toEqual({ code: 0, stderr: '' })
    const whoami = cli(['whoami', '--json'])
    expect(whoami.exitCode).toBe(0)
    expect(JSON.parse(whoami.stdout.toString())).toMatchObject({ UID: 1, User: 'admin', Admin: true })
    // readable output: the table library is bundled too
    expect(cli(['whoami']).stdout.toString()).toMatch(/User:\s+admin/)
    const usage = cli(['user', 'frob'])
    expect(usage.exitCode).toBe(2)
    // the executable tells a terminal from a pipe (cli/stdio.ts, without node:tty): --help keeps its colours on a
    // terminal (a pseudo-terminal from util-linux's `script`) and has none through a pipe
    const colours = { PATH: env.PATH, HOME: dir, TERM: 'xterm' }
    const onTerminal = Bun.spawnSync(['script', '-qec', `'${exe}' --help`, '/dev/null'], { cwd: dir, env: colours, stdin: 'ignore' })
    expect({ code: onTerminal.exitCode, usage: onTerminal.stdout.toString().includes('USAGE'), colours: onTerminal.stdout.toString().includes('\u001b[') }).toEqual({ code: 0, usage: true, colours: true })
    const piped = Bun.spawnSync([exe, '--help'], { cwd: dir, env: colours, stdin: 'ignore' })
    expect({ code: piped.exitCode, usage: piped.stdout.toString().includes('USAGE'), colours: piped.stdout.toString().includes('\u001b[') }).toEqual({ code: 0, usage: true, colours: false })

    const auth = await uploadsThroughTheHashWorker(url)

    await searchesOnTheMatchWorkers(url, auth)
    await shippersDecode(url, auth)
    await servesTheConsole(url)
  } finally {
    server.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  }
}, 120_000)

test('the server as one bytecode bundle (`npm run build:server`) serves: uploads through the SHA-1 worker, searches on the match workers, the lazy modules load', async () => {
  const out = join(dir, 'server-bundle')
  const build = Bun.spawnSync(['npm', 'run', '--silent', 'build:server'], { cwd: ROOT, env: { ...process.env, OUTDIR: out }, stderr: 'pipe', stdout: 'pipe' })
  expect({ code: build.exitCode, stderr: build.stderr.toString() }).toEqual({ code: 0, stderr: expect.any(String) })
  // nothing from the source tree: run from an empty directory with only PATH and HOME, by this Bun
  const server = Bun.spawn([process.execPath, join(out, 'main.js')], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, QUARRY_LISTEN: '127.0.0.1:0', QUARRY_DATA_DIR: join(dir, 'bundle-data'), QUARRY_ADMIN_PASSWORD: 'admin-password-1', QUARRY_UPLOAD_HASH: 'worker' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  try {
    const { url } = await listening(server)
    const auth = await uploadsThroughTheHashWorker(url)
    await searchesOnTheMatchWorkers(url, auth)
    await shippersDecode(url, auth)
    // modules the server loads on first use (server/runtime/metrics.ts, plugins/system/document.ts) are in the bundle
    const metrics = await fetch(`${url}/metrics`)
    expect({ status: metrics.status, families: (await metrics.text()).includes('# TYPE process_cpu_seconds_total counter') }).toEqual({ status: 200, families: true })
    const doc = await fetch(`${url}/api/docs/json`)
    expect({ status: doc.status, openapi: ((await doc.json()) as { openapi: string }).openapi }).toEqual({ status: 200, openapi: '3.1.0' })
    const page = await fetch(`${url}/api/docs/scalar-1.72.1.js`)
    expect({ status: page.status, size: (await page.arrayBuffer()).byteLength > 1_000_000 }).toEqual({ status: 200, size: true })
    await servesTheConsole(url)
  } finally {
    server.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  }
}, 120_000)
