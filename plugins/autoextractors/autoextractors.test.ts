// Auto-extractors over HTTP (plugins/autoextractors/index.ts), and `ax` through the real app: the rules for owner,
// group member, stranger and admin, bad inputs refused with nothing changed, the syntax check, the TOML upload and
// download round trip, and searches that apply the definition of each tag. The route × caller matrix
// (test/security.test.ts) covers anonymous callers and tokens (ExtractorRead, ExtractorWrite) on every route.
import { describe, expect, test } from 'bun:test'
import { type TestServer, expectError, itemWorld, refused, serverPerTest } from '../../test/helpers'
import { MAX_PER_USER } from '.'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const setup = serverPerTest()
const world = async () => itemWorld(await setup())

const WEB_REGEX = '^(?P<method>[A-Z]+) (?P<url>\\S+) (?P<status>\\d+)$'
const webDef = (extra: Record<string, unknown> = {}) => ({ Name: 'web', Desc: 'access lines', Tag: 'web', Module: 'regex', Params: WEB_REGEX, ...extra })

async function create(s: TestServer, jwt: string, body: Record<string, unknown>): Promise<string> {
  const res = await s.call('POST', '/api/autoextractors', { jwt, json: body })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.body).toMatch(UUID)
  return res.body as string
}
const list = async (s: TestServer, jwt: string, q = '') => {
  const res = await s.call('GET', `/api/autoextractors${q}`, { jwt })
  expect(res.status).toBe(200)
  return (res.body as { UUID: string; Name: string }[]).map((a) => a.Name).sort()
}
const get = (s: TestServer, jwt: string, id: string) => s.call('GET', `/api/autoextractors/${id}`, { jwt })
const put = (s: TestServer, jwt: string, json: unknown) => s.call('PUT', '/api/autoextractors', { jwt, json })

describe('create, read, list', () => {
  test('POST answers the UUID as a JSON string; the definition reads back whole', async () => {
    const { s, owner, gid } = await world()
    const now = s.clock.now()
    const id = await create(s, owner.jwt, webDef({ Labels: ['l1'], GIDs: [gid], Tags: ['web2'], Args: '-p' }))
    const res = await get(s, owner.jwt, id)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      UUID: id, UID: owner.uid, GIDs: [gid], Name: 'web', Desc: 'access lines', Labels: ['l1'], Global: false,
      LastUpdated: new Date(now).toISOString(), Tag: 'web', Tags: ['web2'], Module: 'regex', Params: WEB_REGEX, Args: '-p',
    })
  })

  test('the list holds what the caller reads; an admin gets every definition with ?admin=true', async () => {
    const { s, owner, member, stranger, gid, admin } = await world()
    await create(s, owner.jwt, webDef({ Name: 'mine' }))
    await create(s, owner.jwt, webDef({ Name: 'shared', GIDs: [gid] }))
    await create(s, admin, webDef({ Name: 'global', Global: true }))
    await create(s, stranger.jwt, webDef({ Name: 'strangers' }))
    expect(await list(s, owner.jwt)).toEqual(['global', 'mine', 'shared'])
    expect(await list(s, member.jwt)).toEqual(['global', 'shared'])
    expect(await list(s, stranger.jwt, '?admin=true')).toEqual(['global', 'strangers'])
    expect(await list(s, admin)).toEqual(['global'])
    expect(await list(s, admin, '?admin=true')).toEqual(['global', 'mine', 'shared', 'strangers'])
  })

  test('GET: owner, group member, global and admin read; others get 404; a bad id 400', async () => {
    const { s, owner, member, stranger, gid, admin } = await world()
    const shared = await create(s, owner.jwt, webDef({ GIDs: [gid] }))
    const global = await create(s, admin, webDef({ Global: true }))
    for (const jwt of [owner.jwt, member.jwt, admin]) expect((await get(s, jwt, shared)).status).toBe(200)
    expect((await get(s, stranger.jwt, global)).status).toBe(200)
    expectError(await get(s, stranger.jwt, shared), 404)
    expectError(await get(s, owner.jwt, crypto.randomUUID()), 404)
    expectError(await get(s, owner.jwt, 'nope'), 400)
  })

  test('the modules a definition may name are the extraction modules, ax and filters left out', async () => {
    const { s, owner } = await world()
    const res = await s.call('GET', '/api/autoextractors/engines', { jwt: owner.jwt })
    expect(res.status).toBe(200)
    expect(res.body).toContain('regex')
    for (const not of ['ax', 'grep', 'limit', 'count', 'table']) expect(res.body).not.toContain(not)
  })
})

describe('bad inputs change nothing', () => {
  test('shape: module, tags, params; a regex that does not compile', async () => {
    const { s, owner } = await world()
    const bad: [Record<string, unknown>, number][] = [
      [{ ...webDef(), Module: '' }, 400],
      [{ ...webDef(), Module: 'grep' }, 400],
      [{ ...webDef(), Module: 'nosuch' }, 400],
      [{ ...webDef(), Tag: '' }, 400],
      [{ ...webDef(), Tag: 'bad tag' }, 400],
      [{ ...webDef(), Tags: ['web'] }, 400],
      [{ ...webDef(), Tags: ['ok', 'x/y'] }, 400],
      [{ ...webDef(), Params: '' }, 400],
      [{ ...webDef(), Params: '   ' }, 400],
      [{ ...webDef(), Params: 'x'.repeat(4097) }, 400],
      [{ ...webDef(), Params: '(?P<x' }, 400],
      [{ ...webDef(), Args: '-e DATA' }, 400],
      [{ ...webDef(), Args: '-nope' }, 400],
      [{ ...webDef(), Name: 7 }, 400],
      [{ ...webDef(), GIDs: ['1'] }, 400],
      [{ ...webDef(), Global: true }, 403],
      [{ ...webDef(), UID: 1 }, 403],
    ]
    for (const [json, status] of bad) await refused(s, status, 'POST', '/api/autoextractors', { jwt: owner.jwt, json })
  })

  test('sharing with a group the caller is not in is refused; an admin may name any group', async () => {
    const { s, stranger, gid, admin } = await world()
    await refused(s, 403, 'POST', '/api/autoextractors', { jwt: stranger.jwt, json: webDef({ GIDs: [gid] }) })
    await create(s, admin, webDef({ GIDs: [gid, 999] }))
  })
})

describe('the number of definitions one user owns is bounded', () => {
  test('a create or an upload past MAX_PER_USER is refused; replacing by upload still passes', async () => {
    const { s, owner, admin } = await world()
    for (let i = 0; i < MAX_PER_USER - 1; i++)
      await s.store.autoextractors.create({
        uuid: crypto.randomUUID(), uid: owner.uid, name: `n${i}`, description: '', labels: [], global: false, tags: ['web'], module: 'regex',
        params: '(?P<x>.)', args: '', updated: s.clock.now(), gids: [],
      })
    const table = (name: string) => `[[extraction]]\nname="${name}"\ntag="web"\nmodule="regex"\nparams="(?P<y>.)"\n`
    const file = (...names: string[]) => form(names.map(table).join(''))
    // one place left: two new definitions are refused whole
    await refused(s, 400, 'POST', '/api/autoextractors/upload', { jwt: owner.jwt, ...file('a', 'b') })
    await create(s, owner.jwt, webDef({ Name: 'last' }))
    await refused(s, 400, 'POST', '/api/autoextractors', { jwt: owner.jwt, json: webDef() })
    await refused(s, 400, 'POST', '/api/autoextractors', { jwt: admin, json: webDef({ UID: owner.uid }) })
    await refused(s, 400, 'POST', '/api/autoextractors/upload', { jwt: owner.jwt, ...file('new') })
    expect((await s.call('POST', '/api/autoextractors/upload', { jwt: owner.jwt, ...file('n0') })).status).toBe(200)
    await create(s, admin, webDef())
  })
})

describe('PUT and DELETE', () => {
  test('the body UUID names the definition; absent fields keep their value; Tag replaces the first tag only', async () => {
    const { s, owner } = await world()
    const id = await create(s, owner.jwt, webDef({ Tags: ['web2'], Labels: ['a'] }))
    s.clock.advance(5000)
    const res = await put(s, owner.jwt, { UUID: id.toUpperCase(), Name: 'renamed', Tag: 'www' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ UUID: id, Name: 'renamed', Desc: 'access lines', Labels: ['a'], Tag: 'www', Tags: ['web2'], Params: WEB_REGEX })
    expect(res.body.LastUpdated).toBe(new Date(s.clock.now()).toISOString())
    expect((await get(s, owner.jwt, id)).body).toEqual(res.body)
    // what a Go client sends back (Tag and Tags as read) changes nothing; Tags replaces the others
    expect((await put(s, owner.jwt, res.body)).body).toMatchObject({ Tag: 'www', Tags: ['web2'] })
    expect((await put(s, owner.jwt, { UUID: id, Tags: [], Params: '(?P<x>.)', Args: '-p', Labels: [], Desc: null })).body).toMatchObject({
      Tag: 'www', Tags: [], Params: '(?P<x>.)', Args: '-p', Labels: [], Desc: '',
    })
  })

  test('owner and admin change and delete; a reader gets 403, others 404; bad changes are refused whole', async () => {
    const { s, owner, member, stranger, gid, admin } = await world()
    const id = await create(s, owner.jwt, webDef({ GIDs: [gid] }))
    await refused(s, 403, 'PUT', '/api/autoextractors', { jwt: member.jwt, json: { UUID: id, Name: 'x' } })
    await refused(s, 404, 'PUT', '/api/autoextractors', { jwt: stranger.jwt, json: { UUID: id, Name: 'x' } })
    await refused(s, 400, 'PUT', '/api/autoextractors', { jwt: owner.jwt, json: { Name: 'x' } })
    await refused(s, 400, 'PUT', '/api/autoextractors', { jwt: owner.jwt, json: { UUID: id, Name: 'x', Params: '(' } })
    await refused(s, 400, 'PUT', '/api/autoextractors', { jwt: owner.jwt, json: { UUID: id, Module: 'count' } })
    await refused(s, 403, 'PUT', '/api/autoextractors', { jwt: owner.jwt, json: { UUID: id, Global: true } })
    await refused(s, 403, 'PUT', '/api/autoextractors', { jwt: owner.jwt, json: { UUID: id, UID: member.uid } })
    await refused(s, 403, 'DELETE', `/api/autoextractors/${id}`, { jwt: member.jwt })
    await refused(s, 404, 'DELETE', `/api/autoextractors/${id}`, { jwt: stranger.jwt })
    expect((await put(s, admin, { UUID: id, Global: true, UID: member.uid })).body).toMatchObject({ Global: true, UID: member.uid })
    expect((await put(s, member.jwt, { UUID: id, Name: 'the new owner' })).status).toBe(200)
    const del = await s.call('DELETE', `/api/autoextractors/${id}`, { jwt: admin })
    expect({ status: del.status, body: del.body }).toEqual({ status: 200, body: {} })
    expectError(await get(s, owner.jwt, id), 404)
    await refused(s, 404, 'DELETE', `/api/autoextractors/${id}`, { jwt: admin })
  })
})

describe('POST /api/autoextractors/test', () => {
  test('compiles as a search would; TagExists when another definition of the caller covers a tag', async () => {
    const { s, owner, member } = await world()
    const check = (jwt: string, json: unknown) => s.call('POST', '/api/autoextractors/test', { jwt, json })
    expect((await check(owner.jwt, webDef())).body).toEqual({ TagExists: false })
    const id = await create(s, owner.jwt, webDef())
    expect((await check(owner.jwt, webDef())).body).toEqual({ TagExists: true })
    expect((await check(owner.jwt, webDef({ UUID: id }))).body).toEqual({ TagExists: false })
    expect((await check(member.jwt, webDef())).body).toEqual({ TagExists: false })
    for (const [json, error] of [
      [webDef({ Params: '(?P<x' }), /^parse error for extractor on tag web: invalid regular expression/],
      [webDef({ Args: '-x' }), /^parse error for extractor on tag web: unknown flag -x/],
      [webDef({ Module: 'json2' }), /cannot be an auto-extractor module/],
      [webDef({ Tag: '' }), /Tag is missing/],
    ] as const) {
      const res = await check(owner.jwt, json)
      expect(res.status).toBe(400)
      expect(res.body.Error).toMatch(error)
      expect(typeof res.body.TagExists).toBe('boolean')
    }
  })
})

const FORM_BOUNDARY = 'ax-test-boundary'
const form = (text: string, part = 'extraction') => ({
  body: `--${FORM_BOUNDARY}\r\nContent-Disposition: form-data; name="${part}"; filename="x.toml"\r\n\r\n${text}\r\n--${FORM_BOUNDARY}--\r\n`,
  headers: { 'content-type': `multipart/form-data; boundary=${FORM_BOUNDARY}` },
})

describe('definition files', () => {
  test('upload, download and upload again: the same definitions, re-uploading updates them', async () => {
    const { s, owner } = await world()
    const file = [
      '# two definitions, as configuration/autoextractors.md writes them',
      '[[extraction]]',
      '\ttags=["apache", "apache2"]',
      '\tname="apacheaccess"',
      '\tdesc="Apache 2.0 \\"access\\" log — ünïcode\\u007f"',
      '\tmodule="regex"',
      '\targs="" #empty values can be omitted',
      "\tparams='^(?P<ip>\\d+\\.\\d+\\.\\d+\\.\\d+)[^\\\"]+\\\"(?P<method>\\S+)'",
      '[[extraction]]',
      '\ttag="web"',
      '\tmodule="regex"',
      '\tparams="(?P<x>\\\\w+)"',
    ].join('\n')
    const up = await s.call('POST', '/api/autoextractors/upload', { jwt: owner.jwt, ...form(file) })
    expect({ status: up.status, text: up.text }).toMatchObject({ status: 200 })
    const ids = up.body as string[]
    expect(ids).toHaveLength(2)
    const first = (await get(s, owner.jwt, ids[0]!)).body
    expect(first).toMatchObject({
      Name: 'apacheaccess', Desc: 'Apache 2.0 "access" log — ünïcode\x7f', Tag: 'apache', Tags: ['apache2'], Module: 'regex', Args: '',
      Params: '^(?P<ip>\\d+\\.\\d+\\.\\d+\\.\\d+)[^\\"]+\\"(?P<method>\\S+)',
    })
    expect((await get(s, owner.jwt, ids[1]!)).body).toMatchObject({ Name: '', Tag: 'web', Params: '(?P<x>\\w+)' })

    const down = await s.call('GET', `/api/autoextractors/download?id=${ids[0]}&id=${ids[1]}`, { jwt: owner.jwt })
    expect(down.status).toBe(200)
    expect(down.headers.get('content-type')).toContain('text/plain')
    expect(down.headers.get('x-content-type-options')).toBe('nosniff')
    // the TypeScript client's reading of a download: `key = <JSON string>` per line
    expect(down.text).toContain('\tname = "apacheaccess"\n')
    // uploading the download again changes the named definition in place and creates the unnamed one anew
    s.clock.advance(1000)
    const again = await s.call('POST', '/api/autoextractors/upload', { jwt: owner.jwt, ...form(down.text, 'file') })
    expect(again.status).toBe(200)
    expect(again.body[0]).toBe(ids[0])
    expect(again.body[1]).not.toBe(ids[1])
    const after = (await get(s, owner.jwt, ids[0]!)).body
    expect({ ...after, LastUpdated: '' }).toEqual({ ...first, LastUpdated: '' })
    expect((await get(s, owner.jwt, again.body[1])).body).toMatchObject({ Tag: 'web', Params: '(?P<x>\\w+)', Module: 'regex' })
    // without ids: every definition the caller reads
    const all = await s.call('GET', '/api/autoextractors/download', { jwt: owner.jwt })
    expect(all.text.split('[[extraction]]').length - 1).toBe(3)
  })

  test('a form-data body without a Content-Type (the TypeScript client under Bun) is read by its first line; other untyped bodies are refused', async () => {
    const { s, owner } = await world()
    // the npm form-data package the client builds its upload with; Bun's fetch sends its bytes without their type
    const NpmFormData = require('form-data') as new () => { append(name: string, value: string, opts: { filename: string }): void; getBuffer(): Buffer }
    const fd = new NpmFormData()
    fd.append('extraction', '[[extraction]]\ntag="web"\nmodule="regex"\nparams="(?P<x>\\\\w+)"\n', { filename: 'whatever.txt' })
    const up = await s.call('POST', '/api/autoextractors/upload', { jwt: owner.jwt, body: new Uint8Array(fd.getBuffer()) })
    expect({ status: up.status, text: up.text }).toMatchObject({ status: 200 })
    expect(up.body).toHaveLength(1)
    expect((await get(s, owner.jwt, up.body[0])).body).toMatchObject({ Tag: 'web', Module: 'regex', Params: '(?P<x>\\w+)' })
    const plain = new TextEncoder().encode('[[extraction]]\ntag="web"\nmodule="regex"\nparams="x"\n')
    await refused(s, 400, 'POST', '/api/autoextractors/upload', { jwt: owner.jwt, body: plain })
  })

  test('a bad file, or a bad definition in it, stores nothing; unreachable ids are not downloaded', async () => {
    const { s, owner, stranger } = await world()
    const good = '[[extraction]]\ntag="web"\nmodule="regex"\nparams="(?P<x>.)"\n'
    for (const text of [
      'not toml = = =',
      '[other]\nx="y"',
      '[[extraction]]\ntag="web"\nmodule="regex"\nparams=7',
      '[[extraction]]\ntags="web"\nmodule="regex"\nparams="x"',
      `${good}[[extraction]]\ntag="web"\nmodule="regex"\nparams="(?P<x"\n`,
      `${good}[[extraction]]\ntag="bad tag"\nmodule="regex"\nparams="x"\n`,
      `${good}[[extraction]]\ntag="web"\nmodule="grep"\nparams="x"\n`,
    ])
      await refused(s, 400, 'POST', '/api/autoextractors/upload', { jwt: owner.jwt, ...form(text) })
    await refused(s, 400, 'POST', '/api/autoextractors/upload', { jwt: owner.jwt, ...form(good, 'other') })
    await refused(s, 400, 'POST', '/api/autoextractors/upload', { jwt: owner.jwt, ...form('x'.repeat(1024 * 1024 + 1)) })
    await refused(s, 400, 'POST', '/api/autoextractors/upload', { jwt: owner.jwt, json: { file: good } })
    const id = await create(s, owner.jwt, webDef())
    expectError(await s.call('GET', `/api/autoextractors/download?id=${id}`, { jwt: stranger.jwt }), 404)
    expectError(await s.call('GET', '/api/autoextractors/download?id=nope', { jwt: owner.jwt }), 400)
  })
})

// ---- ax through the app

const T0 = Date.UTC(2026, 0, 1)
const b64 = (text: string) => Buffer.from(text).toString('base64')
const METHODS = ['GET', 'POST', 'PUT', 'DELETE']
const STATUSES = [200, 201, 301, 404, 500]
/** Access lines of tag web, and lines of another format under tag app. */
const webLines = Array.from({ length: 300 }, (_, i) => `${METHODS[(i * 7) % 4]} /p${i % 13} ${STATUSES[(i * 11) % 5]}`)

async function ingest(s: TestServer, tag: string, lines: string[]) {
  const res = await s.call('POST', '/api/ingest/json', {
    jwt: s.adminJwt,
    json: lines.map((l, i) => ({ TS: new Date(T0 + i * 1000).toISOString(), Tag: tag, SRC: '192.0.2.7', Data: b64(l) })),
  })
  expect(res.status).toBe(200)
}

/** Runs a query as `jwt` and answers its JSON records once it finished. */
async function search(s: TestServer, jwt: string, query: string): Promise<any[]> {
  const launch = await s.call('POST', '/api/searchctrl/launch', { jwt, json: { SearchString: query } })
  expect({ status: launch.status, text: launch.text }).toMatchObject({ status: 200 })
  await s.searches.settled()
  const res = await s.call('GET', `/api/searchctrl/${launch.body.SearchID}/download/json`, { jwt })
  expect(res.status).toBe(200)
  const details = await s.call('GET', `/api/searchctrl/${launch.body.SearchID}/details`, { jwt })
  expect(details.body.Error ?? '').toBe('')
  return res.body
}
const valuesOf = (records: { Enumerated?: { Name: string; ValueStr: string }[] }[]) =>
  records.map((r) => Object.fromEntries((r.Enumerated ?? []).map((v) => [v.Name, v.ValueStr])))

describe('ax applies the definition of each tag', () => {
  test('fields, filters and renames agree with a plain split of the same lines', async () => {
    const { s, owner } = await world()
    await create(s, owner.jwt, webDef())
    await create(s, owner.jwt, { Name: 'app', Tag: 'app', Module: 'regex', Params: 'user=(?P<user>\\w+) took=(?P<ms>\\d+)' })
    await ingest(s, 'web', webLines)
    await ingest(s, 'app', ['user=ann took=12', 'user=bob took=7', 'no match here'])
    const split = webLines.map((l) => l.split(' ') as [string, string, string])

    expect(valuesOf(await search(s, owner.jwt, 'tag=web ax method'))).toEqual(split.map(([m]) => ({ method: m })))
    expect(valuesOf(await search(s, owner.jwt, 'tag=web ax'))).toEqual(split.map(([method, url, status]) => ({ method, url, status })))
    expect(valuesOf(await search(s, owner.jwt, 'tag=web ax status==404 url as path'))).toEqual(
      split.filter(([, , st]) => st === '404').map(([, url, status]) => ({ status, path: url })),
    )
    expect(await search(s, owner.jwt, 'tag=web ax method==GET status>=400 | count')).toEqual([
      { Count: split.filter(([m, , st]) => m === 'GET' && Number(st) >= 400).length },
    ])
    // two tags, two formats: each entry gets its own tag's fields; a field the tag lacks stays unset
    const both = valuesOf(await search(s, owner.jwt, 'tag=web,app ax user status'))
    expect(both).toHaveLength(webLines.length + 2)
    expect(both.filter((v) => 'user' in v)).toEqual([{ user: 'ann' }, { user: 'bob' }])
    expect(both.filter((v) => 'status' in v)).toHaveLength(webLines.length)
  })

  test('the owner\'s definition first, then a group\'s, then a global one; a tag without one passes nothing', async () => {
    const { s, owner, member, stranger, gid, admin } = await world()
    await ingest(s, 'web', webLines.slice(0, 5))
    await create(s, admin, { Name: 'global', Tag: 'web', Module: 'regex', Params: '^(?P<g>\\S+)', Global: true })
    await create(s, owner.jwt, webDef({ Name: 'group', Params: '^\\S+ (?P<url>\\S+)', GIDs: [gid] }))
    // among the owner's own two, the one changed last
    s.clock.advance(1000)
    await create(s, owner.jwt, webDef({ Name: 'own' }))
    const firsts = (records: any[]) => valuesOf(records)[0]
    expect(firsts(await search(s, owner.jwt, 'tag=web ax'))).toEqual({ method: 'GET', url: '/p0', status: '200' })
    expect(firsts(await search(s, member.jwt, 'tag=web ax'))).toEqual({ url: '/p0' })
    expect(firsts(await search(s, stranger.jwt, 'tag=web ax'))).toEqual({ g: 'GET' })
    expect(await search(s, owner.jwt, 'tag=nothing ax')).toEqual([])
  })

  test('a definition that does not compile at search time ends the search naming its tag', async () => {
    const { s, owner } = await world()
    await ingest(s, 'web', webLines.slice(0, 3))
    const id = await create(s, owner.jwt, webDef())
    // stored before a check could see it (as by an older version): ax reports it when the search reaches the tag
    await s.store.autoextractors.update(id, { args: '-nope', updated: s.clock.now() })
    const launch = await s.call('POST', '/api/searchctrl/launch', { jwt: owner.jwt, json: { SearchString: 'tag=web ax' } })
    await s.searches.settled()
    await s.call('GET', `/api/searchctrl/${launch.body.SearchID}/download/json`, { jwt: owner.jwt })
    const details = await s.call('GET', `/api/searchctrl/${launch.body.SearchID}/details`, { jwt: owner.jwt })
    expect(details.body.Error).toMatch(/^ax: parse error for extractor on tag web: unknown flag -nope/)
  })
})

describe('suggestions from sample entries (POST /api/explore/generate)', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64')
  const entry = (data: string, i = 0) => ({ TS: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), Tag: 0, SRC: '', Data: b64(data), Enumerated: [] })

  test('JSON objects: a json definition naming their members, confidence 10, each entry\'s elements; it compiles as a search would', async () => {
    const { s, owner } = await world()
    const docs = Array.from({ length: 12 }, (_, i) => ({ timestamp: new Date(Date.UTC(2010, 0, 1, 0, i)).toISOString(), value: i, 'odd.key': i % 2 === 1, where: { host: `h${i % 3}`, port: 8000 + i } }))
    const res = await s.call('POST', '/api/explore/generate', { jwt: owner.jwt, json: { Tag: 'web', Entries: docs.map((d, i) => entry(JSON.stringify(d, null, 2), i)) } })
    expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
    const [json] = res.body.json
    expect(res.body.json).toHaveLength(1)
    expect(json.Extractor).toMatchObject({ Module: 'json', Tag: 'web', Params: 'timestamp value "odd.key" where', Args: '' })
    expect(json.Confidence).toBe(10)
    expect(json.Entries).toHaveLength(12)
    expect(json.Explore).toHaveLength(12)
    for (const [i, x] of (json.Explore as { Elements: any[]; Module: string; Tag: string }[]).entries()) {
      expect({ Module: x.Module, Tag: x.Tag }).toEqual({ Module: 'json', Tag: 'web' })
      const d = docs[i]!
      expect(x.Elements.map((e) => [e.Path, e.Value])).toEqual([['timestamp', d.timestamp], ['value', d.value], ['"odd.key"', d['odd.key']], ['where', JSON.stringify(d.where)]])
      expect(x.Elements[1].Filters).toEqual(['==', '!=', '<', '>', '<=', '>='])
      expect(x.Elements[0].Filters).toContain('~')
      expect(x.Elements[3].SubElements.map((e: any) => [e.Path, e.Value])).toEqual([['where.host', d.where.host], ['where.port', d.where.port]])
    }
    // the suggestion installs as it is
    const check = await s.call('POST', '/api/autoextractors/test', { jwt: owner.jwt, json: { Tag: 'web', Module: 'json', Params: json.Extractor.Params } })
    expect(check.status).toBe(200)
    // no key=value words: no kv suggestion
    expect(res.body.kv).toBeUndefined()
  })

  test('key=value lines: a kv definition, confidence the share of words that are pairs; half JSON entries give json 5', async () => {
    const { s, owner } = await world()
    const lines = ['a=1 b=x c', 'b=y a=2.5 d', 'a=3 q="z"']
    const res = await s.call('POST', '/api/explore/generate', { jwt: owner.jwt, json: { Tag: 'kvs', Entries: lines.map((l, i) => entry(l, i)) } })
    expect(res.status).toBe(200)
    expect(res.body.json).toBeUndefined()
    const [kv] = res.body.kv
    expect(kv.Extractor).toMatchObject({ Module: 'kv', Params: 'a b q', Tag: 'kvs' })
    // 6 pairs among 8 words
    expect(kv.Confidence).toBe(7.5)
    expect(kv.Explore.map((x: any) => x.Elements.map((e: any) => [e.Name, e.Value]))).toEqual([
      [['a', 1], ['b', 'x']],
      [['b', 'y'], ['a', 2.5]],
      [['a', 3], ['q', 'z']],
    ])
    const mixed = await s.call('POST', '/api/explore/generate', { jwt: owner.jwt, json: { Tag: 'm', Entries: [entry('{"x": 1}'), entry('plain words'), entry('{"x": 2}'), entry('[1, 2]')] } })
    expect(mixed.body.json[0].Confidence).toBe(5)
    expect(mixed.body.json[0].Entries).toHaveLength(2)
  })

  test('a bad tag or too many entries is refused; data that is not base64 is read by no module', async () => {
    const { s, owner } = await world()
    await refused(s, 400, 'POST', '/api/explore/generate', { jwt: owner.jwt, json: { Tag: 'bad tag', Entries: [entry('{"x": 1}')] } })
    await refused(s, 400, 'POST', '/api/explore/generate', { jwt: owner.jwt, json: { Tag: 'web', Entries: Array.from({ length: 1001 }, () => entry('{"x": 1}')) } })
    const res = await s.call('POST', '/api/explore/generate', { jwt: owner.jwt, json: { Tag: 'web', Entries: [{ ...entry(''), Data: 'not base64!' }] } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
  })
})
