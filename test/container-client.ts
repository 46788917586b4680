// The API half of test/container.sh, run INSIDE the container (`podman exec -i NAME bun run - < this file`), so the
// container needs no published port: it talks to the server on the address of the container's own QUARRY_LISTEN.
//   CHECK_PHASE=write   logs in as admin, creates a dashboard and uploads a file; prints `STATE {json}` with their ids
//   CHECK_PHASE=read    CHECK_STATE={json}: logs in again and reads both back
// Every check prints `PASS: what` or `FAIL: what (why)`; the shell script counts them.
export {}

const env = process.env
const listen = env.QUARRY_LISTEN ?? '0.0.0.0:8080'
const port = listen.slice(listen.lastIndexOf(':') + 1)
const base = `http://127.0.0.1:${port}`
const password = env.CHECK_PASSWORD ?? ''

const DASHBOARD = { Name: 'container-check', Data: { tiles: [{ title: 'kept across a restart' }] } }
const FILE_TEXT = `container check ${crypto.randomUUID()}\n`

function check(what: string, ok: boolean, why = ''): boolean {
  console.log(ok ? `PASS: ${what}` : `FAIL: ${what}${why ? ` (${why})` : ''}`)
  return ok
}

async function call(method: string, path: string, jwt: string, body?: string | FormData, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { method, body, headers: { ...headers, ...(jwt ? { authorization: `Bearer ${jwt}` } : {}) } })
  const text = await res.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: res.status, text, json }
}

async function login(): Promise<string> {
  const res = await call('POST', '/api/login', '', JSON.stringify({ User: 'admin', Pass: password }), { 'content-type': 'application/json' })
  check('admin logs in', res.status === 200 && typeof res.json?.JWT === 'string', `${res.status} ${res.text.slice(0, 200)}`)
  return res.json?.JWT ?? ''
}

if (env.CHECK_PHASE === 'write') {
  const jwt = await login()
  const dash = await call('POST', '/api/dashboards', jwt, JSON.stringify(DASHBOARD), { 'content-type': 'application/json' })
  check('a dashboard is created', dash.status === 200 && typeof dash.json === 'number', `${dash.status} ${dash.text.slice(0, 200)}`)
  const form = new FormData()
  form.set('file', new File([FILE_TEXT], 'check.txt', { type: 'text/plain' }))
  form.set('name', 'container-check')
  const file = await call('POST', '/api/files', jwt, form)
  check('a file is uploaded', file.status === 200 && typeof file.json?.GUID === 'string', `${file.status} ${file.text.slice(0, 200)}`)
  // the API reference page works offline: its one script comes from this server (vendor/ is in the image)
  const page = await call('GET', '/api/docs', '')
  const src = /<script\b[^>]*\bsrc="([^"]*)"/.exec(page.text)?.[1] ?? ''
  const script = src.startsWith('/') ? await fetch(`${base}${src}`) : undefined
  const bytes = script ? new Uint8Array(await script.arrayBuffer()) : new Uint8Array()
  check(
    'the docs page loads the vendored Scalar bundle from the server',
    page.status === 200 && script?.status === 200 && script.headers.get('content-type')?.startsWith('text/javascript') === true && bytes.length > 1_000_000,
    `page ${page.status}, src ${src}, script ${script?.status} ${script?.headers.get('content-type')} ${bytes.length} bytes`,
  )
  console.log(`STATE ${JSON.stringify({ dashboard: dash.json, file: file.json?.GUID, text: FILE_TEXT })}`)
} else if (env.CHECK_PHASE === 'read') {
  const state = JSON.parse(env.CHECK_STATE ?? '{}') as { dashboard: number; file: string; text: string }
  const jwt = await login()
  const dash = await call('GET', `/api/dashboards/${state.dashboard}`, jwt)
  check(
    'the dashboard is read back after the restart',
    dash.status === 200 && dash.json?.Name === DASHBOARD.Name && JSON.stringify(dash.json?.Data) === JSON.stringify(DASHBOARD.Data),
    `${dash.status} ${dash.text.slice(0, 200)}`,
  )
  const file = await call('GET', `/api/files/${state.file}`, jwt)
  check('the uploaded file is read back after the restart', file.status === 200 && file.text === state.text, `${file.status} ${file.text.slice(0, 200)}`)
} else {
  check('CHECK_PHASE is write or read', false, String(env.CHECK_PHASE))
}
