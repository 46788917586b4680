// Small HTTP helpers for the benchmark scripts, so they need neither curl nor jq.
//
//   bun run bench/lib.ts free-port                  print a free loopback TCP port
//   bun run bench/lib.ts wait <url> [seconds]       wait until <url> answers (any status), at most <seconds> (default 30)
//   bun run bench/lib.ts seed <base> <password>     log in as admin, give admin two groups, print the JWT
//   bun run bench/lib.ts token <base> <jwt>         create an API token (permission ListUsers) and print its secret
//   bun run bench/lib.ts body <url> [header]        GET <url> with an optional "Name: value" header; print the JSON
//                                                   body without TS (fails unless 200)
//   bun run bench/lib.ts answer <url> [header]      the same with X-Request-Id sent, then the answer's headers
//   bun run bench/lib.ts login <base> <password>    log in as admin and print the JWT (nothing else is changed)
//   bun run bench/lib.ts resource <base> <jwt> <name>  create an empty resource and print its GUID
//   bun run bench/lib.ts field <file.json> <name>   print member <name> of the JSON object in <file.json>
//   bun run bench/lib.ts sha1 <file>                hash <file> with Bun.CryptoHasher (the server's SHA-1), read in
//                                                   1 MiB pieces; print the µs it took (Bun's start excluded) and
//                                                   the SHA-1 in base64
//   bun run bench/lib.ts count <url> [header]       GET <url>; print the length of the JSON array it answers (fails unless 200)
//   bun run bench/lib.ts dashboard <base> <jwt>     create a dashboard (a few panels of Data) and print its ID
//   bun run bench/lib.ts database <postgres-url> <name>  create database <name> on that server; print its URL
//   bun run bench/lib.ts drop-database <postgres-url> <name>  drop database <name> (its connections too)

export {}

const [cmd, ...args] = process.argv.slice(2)

function fail(msg: string): never {
  console.error(`bench/lib.ts: ${msg}`)
  process.exit(1)
}

async function json(res: Response, what: string): Promise<any> {
  const text = await res.text()
  if (!res.ok) fail(`${what}: HTTP ${res.status}: ${text}`)
  try {
    return JSON.parse(text)
  } catch {
    fail(`${what}: not JSON: ${text}`)
  }
}

/** Logs in as admin and answers the JWT. */
async function adminLogin(base: string, password: string): Promise<string> {
  const { JWT } = await json(
    await fetch(`${base}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ User: 'admin', Pass: password }),
    }),
    'login',
  )
  if (typeof JWT !== 'string') fail('login answered no JWT')
  return JWT
}

switch (cmd) {
  case 'free-port': {
    const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
    console.log(s.port)
    s.stop(true)
    break
  }
  case 'wait': {
    const [url, seconds = '30'] = args
    if (!url) fail('wait <url> [seconds]')
    const deadline = Date.now() + Number(seconds) * 1000
    for (;;) {
      try {
        await fetch(url, { signal: AbortSignal.timeout(1000) })
        break
      } catch {
        if (Date.now() > deadline) fail(`${url} did not answer within ${seconds}s`)
        await Bun.sleep(100)
      }
    }
    break
  }
  case 'seed': {
    const [base, password] = args
    if (!base || !password) fail('seed <base> <password>')
    const JWT = await adminLogin(base, password)
    const auth = { authorization: `Bearer ${JWT}`, 'content-type': 'application/json' }
    // Two memberships, so the groups query of whoami returns rows rather than nothing.
    const gids: number[] = []
    for (const [Name, Desc] of [['bench-readers', 'benchmark group one'], ['bench-writers', 'benchmark group two']]) {
      gids.push(await json(await fetch(`${base}/api/groups`, { method: 'POST', headers: auth, body: JSON.stringify({ Name, Desc }) }), 'create group'))
    }
    await json(await fetch(`${base}/api/users/1/group`, { method: 'POST', headers: auth, body: JSON.stringify({ GIDs: gids }) }), 'add groups')
    console.log(JWT)
    break
  }
  case 'token': {
    const [base, jwt] = args
    if (!base || !jwt) fail('token <base> <jwt>')
    const created = await json(
      await fetch(`${base}/api/tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench', capabilities: ['ListUsers'] }),
      }),
      'create token',
    )
    console.log(created.token)
    break
  }
  case 'body':
  case 'answer': {
    const [url, header] = args
    if (!url) fail(`${cmd} <url> [header]`)
    // `answer`: with a fixed request id, which every server must echo, and the answer's headers printed too.
    const headers: Record<string, string> = cmd === 'answer' ? { 'x-request-id': 'bench-compare-check' } : {}
    if (header) headers[header.slice(0, header.indexOf(':'))] = header.slice(header.indexOf(':') + 1).trim()
    const res = await fetch(url, { headers })
    const answerHeaders = Object.fromEntries([...res.headers].filter(([k]) => !['date', 'content-length', 'connection', 'keep-alive'].includes(k)).sort())
    const body = await json(res, `GET ${url}`)
    delete body.TS // last_active moves while Quarry serves; everything else must match
    console.log(JSON.stringify(body))
    if (cmd === 'answer') console.log(JSON.stringify(answerHeaders))
    break
  }
  case 'login': {
    const [base, password] = args
    if (!base || !password) fail('login <base> <password>')
    const JWT = await adminLogin(base, password)
    console.log(JWT)
    break
  }
  case 'resource': {
    const [base, jwt, name] = args
    if (!base || !jwt || !name) fail('resource <base> <jwt> <name>')
    const { GUID } = await json(
      await fetch(`${base}/api/resources`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ResourceName: name, Description: 'benchmark' }),
      }),
      'create resource',
    )
    if (typeof GUID !== 'string') fail('create resource answered no GUID')
    console.log(GUID)
    break
  }
  case 'field': {
    const [file, name] = args
    if (!file || !name) fail('field <file.json> <name>')
    const text = await Bun.file(file).text()
    let obj: any
    try {
      obj = JSON.parse(text)
    } catch {
      fail(`${file}: not JSON: ${text.slice(0, 500)}`)
    }
    if (!(name in obj)) fail(`${file}: no member ${name}: ${text.slice(0, 500)}`)
    console.log(String(obj[name]))
    break
  }
  case 'sha1': {
    const [file] = args
    if (!file) fail('sha1 <file>')
    // Read in 1 MiB pieces into one buffer, and hashed as the server's hash worker does (1 MiB batches).
    const { openSync, readSync, closeSync } = await import('node:fs')
    const t0 = performance.now()
    const hasher = new Bun.CryptoHasher('sha1')
    const fd = openSync(file, 'r')
    const buf = new Uint8Array(1024 * 1024)
    for (let n; (n = readSync(fd, buf)) > 0; ) hasher.update(n === buf.byteLength ? buf : buf.subarray(0, n))
    closeSync(fd)
    const digest = hasher.digest('base64')
    console.log(Math.round((performance.now() - t0) * 1000), digest)
    break
  }
  case 'count': {
    const [url, header] = args
    if (!url) fail('count <url> [header]')
    const headers: Record<string, string> = {}
    if (header) headers[header.slice(0, header.indexOf(':'))] = header.slice(header.indexOf(':') + 1).trim()
    const body = await json(await fetch(url, { headers }), `GET ${url}`)
    if (!Array.isArray(body)) fail(`GET ${url}: not an array`)
    console.log(body.length)
    break
  }
  case 'dashboard': {
    const [base, jwt] = args
    if (!base || !jwt) fail('dashboard <base> <jwt>')
    const panels = Array.from({ length: 8 }, (_, i) => ({ id: i, title: `panel ${i}`, query: `tag=bench grep needle${i}`, x: i % 4, y: Math.floor(i / 4) }))
    const id = await json(
      await fetch(`${base}/api/dashboards`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        body: JSON.stringify({ Name: 'bench', Description: 'benchmark dashboard', Labels: ['bench'], Data: { panels } }),
      }),
      'create dashboard',
    )
    if (typeof id !== 'number') fail(`create dashboard answered ${JSON.stringify(id)}`)
    console.log(id)
    break
  }
  case 'database':
  case 'drop-database': {
    const [server, name] = args
    if (!server || !name || !/^[a-z_][a-z0-9_]*$/.test(name)) fail(`${cmd} <postgres-url> <name: lowercase letters, digits, _>`)
    const admin = new Bun.SQL(server, { max: 1 })
    if (cmd === 'database') {
      await admin.unsafe(`CREATE DATABASE ${name}`)
      const url = new URL(server)
      url.pathname = `/${name}`
      console.log(url.toString())
    } else await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.close()
    break
  }
  default:
    fail(`unknown command ${cmd ?? '(none)'}`)
}
