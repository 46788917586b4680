// One contract suite for every Store: SQLite in a temporary file, and PostgreSQL on the test server test/run.sh
// starts (test/pg-server.sh; a fresh database per test). The PostgreSQL run never skips: without
// QUARRY_TEST_DATABASE_URL it fails; only a run without the test servers (test/services.ts) leaves it out. Every repository method runs here with the same assertions on both.
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Store, blobReferences, createSqliteStore } from '../server/repos'
import { createPgStore } from '../server/repos.pg'
import { UniqueViolation } from '../server/store/unique'
import { QuotaExceeded } from '../server/store/quota'
import { PG_MIGRATIONS } from '../server/store/migrations-pg'
import { MIGRATIONS } from '../server/store/migrations'
import { notificationsContract } from '../plugins/notifications/repo.contract'
import { freshDatabase, testDatabaseUrl } from './pg'
import { describeWithServers, withServers } from './services'
import type { SavedSearchRow } from '../server/search/repo'

interface Harness {
  store: Store
  cleanup(): Promise<void>
}

const engines: [string, () => Promise<Harness>][] = [
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'quarry-contract-'))
      const store = createSqliteStore(join(dir, 'quarry.db'))
      return { store, cleanup: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) }
    },
  ],
  [
    'pg',
    async () => {
      const db = await freshDatabase()
      const store = await createPgStore(db.url, { max: 8 })
      return { store, cleanup: async () => (await store.close(), await db.drop()) }
    },
  ],
]

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (e) {
    return e
  }
  throw new Error('expected a rejection')
}

const T0 = 1_700_000_000_000

describe.each(withServers ? engines : engines.filter(([name]) => name === 'sqlite'))('store contract: %s', (_engine, open) => {
  const harnesses: Harness[] = []
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.cleanup()
  })
  const setup = async () => {
    const h = await open()
    harnesses.push(h)
    return h.store
  }
  const user = (store: Store, username: string, admin = false) =>
    store.users.create({ username, name: `N ${username}`, email: `${username}@x`, passwordHash: `h-${username}`, admin }, T0)

  test('users: ids from 1, ASCII-case-insensitive unique names, changes, locking ends sessions', async () => {
    const s = await setup()
    expect(await s.users.count()).toBe(0)
    expect(await user(s, 'admin', true)).toBe(1)
    expect(await user(s, 'Bob')).toBe(2)
    expect(await rejection(user(s, 'bob'))).toBeInstanceOf(UniqueViolation)
    expect(await rejection(user(s, 'BOB'))).toBeInstanceOf(UniqueViolation)
    // NOCASE folds ASCII letters only: a name differing by a non-ASCII case is another name
    expect(await user(s, 'Ärger')).toBe(3)
    expect(await user(s, 'ärger')).toBe(4)
    expect(await s.users.count()).toBe(4)
    expect((await s.users.getByName('BOB'))?.uid).toBe(2)
    expect(await s.users.getByName('nobody')).toBeUndefined()
    expect(await s.users.get(99)).toBeUndefined()
    expect(await s.users.get(1)).toEqual({
      uid: 1, username: 'admin', name: 'N admin', email: 'admin@x', passwordHash: 'h-admin', admin: true, locked: false, defaultGid: null, lastActive: 0,
    })
    expect(await rejection(s.users.update(2, { username: 'ADMIN' }))).toBeInstanceOf(UniqueViolation)
    expect((await s.users.get(2))?.username).toBe('Bob')
    await s.users.update(2, { username: 'bob', name: 'Robert', email: 'r@x', admin: true })
    await s.users.update(2, {})
    expect(await s.users.get(2)).toMatchObject({ username: 'bob', name: 'Robert', email: 'r@x', admin: true, locked: false })
    await s.users.setPasswordHash(2, 'h2')
    await s.users.touch(2, T0 + 5)
    const gid = await s.groups.create('g', '')
    await s.users.setDefaultGid(2, gid)
    expect(await s.users.get(2)).toMatchObject({ passwordHash: 'h2', lastActive: T0 + 5, defaultGid: gid })
    await s.users.setDefaultGid(2, null)
    expect((await s.users.get(2))?.defaultGid).toBeNull()
    await s.sessions.create({ id: 's1', uid: 2, created: T0, lastHit: T0, expires: T0 + 1000, origin: 'o', temp: false })
    await s.users.update(2, { locked: true })
    expect((await s.users.get(2))?.locked).toBe(true)
    expect(await s.sessions.listForUser(2)).toEqual([])
    expect((await s.users.list()).map((u) => u.uid)).toEqual([1, 2, 3, 4])
    // ids are never reused, and a refused insert leaves no gap
    expect(await s.users.delete(4)).toBe(true)
    expect(await s.users.delete(4)).toBe(false)
    expect(await rejection(user(s, 'BOB'))).toBeInstanceOf(UniqueViolation)
    expect(await user(s, 'carol')).toBe(5)
  })

  test('users: preferences upsert, list in (uid, name) order, go with the user', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    await s.users.setPreference(2, 'z', '{"v":1}', T0)
    await s.users.setPreference(1, 'y', '[]', T0)
    await s.users.setPreference(2, 'a', '1', T0)
    await s.users.setPreference(2, 'z', '{"v":2}', T0 + 1)
    expect(await s.users.getPreference(2, 'z')).toEqual({ uid: 2, name: 'z', data: '{"v":2}', updated: T0 + 1 })
    expect(await s.users.getPreference(2, 'none')).toBeUndefined()
    expect((await s.users.listPreferences()).map((p) => [p.uid, p.name])).toEqual([[1, 'y'], [2, 'a'], [2, 'z']])
    await s.users.deletePreference(2, 'a')
    expect(await s.users.getPreference(2, 'a')).toBeUndefined()
    await s.users.delete(2)
    expect((await s.users.listPreferences()).map((p) => p.uid)).toEqual([1])
  })

  test('groups: ids from 1, unique names, memberships, removal clears the default group', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    expect(await s.groups.create('Ops', 'the ops')).toBe(1)
    expect(await s.groups.create('dev', '')).toBe(2)
    expect(await rejection(s.groups.create('OPS', ''))).toBeInstanceOf(UniqueViolation)
    expect(await rejection(s.groups.update(2, { name: 'ops' }))).toBeInstanceOf(UniqueViolation)
    await s.groups.update(2, { name: 'Dev', description: 'devs' })
    await s.groups.update(2, {})
    expect(await s.groups.get(2)).toEqual({ gid: 2, name: 'Dev', description: 'devs' })
    expect(await s.groups.get(9)).toBeUndefined()
    expect(await s.groups.list()).toEqual([{ gid: 1, name: 'Ops', description: 'the ops' }, { gid: 2, name: 'Dev', description: 'devs' }])
    await s.groups.addMember(2, [2, 1, 2])
    await s.groups.addMember(2, [1])
    await s.groups.addMember(1, [])
    await s.groups.addMember(1, [2])
    expect(await rejection(s.groups.addMember(1, [1, 99]))).toBeInstanceOf(Error)
    expect(await s.groups.isMember(1, 1)).toBe(false) // all or nothing
    expect((await s.groups.groupsOf(2)).map((g) => g.gid)).toEqual([1, 2])
    expect(await s.groups.groupsOf(9)).toEqual([])
    expect(await s.groups.isMember(2, 1)).toBe(true)
    expect(await s.groups.isMember(1, 1)).toBe(false)
    expect(await s.groups.memberUids(2)).toEqual([1, 2])
    const all = await s.groups.allMemberships()
    expect([...all.entries()].map(([uid, gs]) => [uid, gs.map((g) => g.gid)])).toEqual([[1, [2]], [2, [1, 2]]])
    await s.users.setDefaultGid(2, 1)
    expect(await s.groups.removeMember(2, 1)).toBe(true)
    expect(await s.groups.removeMember(2, 1)).toBe(false)
    expect((await s.users.get(2))?.defaultGid).toBeNull()
    await s.users.setDefaultGid(1, 2)
    expect(await s.groups.delete(2)).toBe(true)
    expect(await s.groups.delete(2)).toBe(false)
    expect((await s.users.get(1))?.defaultGid).toBeNull()
    expect(await s.groups.groupsOf(1)).toEqual([])
    expect(await s.groups.create('x', '')).toBe(3)
  })

  test('sessions: with their user, touch, per-user and expiry deletes', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    const sess = (id: string, uid: number, created: number, extra = {}) => ({
      id, uid, created, lastHit: created, expires: created + 10_000, origin: '127.0.0.1', temp: false, ...extra,
    })
    await s.sessions.create(sess('s2', 1, T0 + 2))
    await s.sessions.create(sess('s1', 1, T0 + 1, { temp: true }))
    await s.sessions.create(sess('s3', 2, T0 + 3))
    const got = await s.sessions.getWithUser('s1')
    expect(got?.session).toEqual(sess('s1', 1, T0 + 1, { temp: true }))
    expect(got?.user).toEqual(await s.users.get(1))
    expect(await s.sessions.getWithUser('nope')).toBeUndefined()
    await s.sessions.touch('s1', T0 + 50)
    expect((await s.sessions.getWithUser('s1'))?.session.lastHit).toBe(T0 + 50)
    expect((await s.sessions.listForUser(1)).map((x) => x.id)).toEqual(['s1', 's2'])
    expect((await s.sessions.deleteForUser(1, 's1')).sort()).toEqual(['s2'])
    expect(await s.sessions.delete('s1')).toBe(true)
    expect(await s.sessions.delete('s1')).toBe(false)
    await s.sessions.create(sess('s4', 2, T0 + 4))
    expect((await s.sessions.deleteForUser(2)).sort()).toEqual(['s3', 's4'])
    await s.sessions.create(sess('old', 2, T0)) // expires T0 + 10000
    await s.sessions.create(sess('idle', 2, T0 + 9_000)) // last hit T0 + 9000
    await s.sessions.create(sess('fresh', 2, T0 + 9_900))
    expect((await s.sessions.deleteExpired(T0 + 10_000, 1_000)).sort()).toEqual(['idle', 'old'])
    expect((await s.sessions.listForUser(2)).map((x) => x.id)).toEqual(['fresh'])
  })

  test('sessions: created only while the account is unlocked and still has the verified hash', async () => {
    const s = await setup()
    await user(s, 'a')
    const sess = (id: string, uid = 1) => ({ id, uid, created: T0, lastHit: T0, expires: T0 + 10_000, origin: 'o', temp: false })
    expect(await s.sessions.create(sess('plain'))).toBe(true)
    expect(await s.sessions.create(sess('hash'), 'h-a')).toBe(true)
    expect(await s.sessions.create(sess('other-hash'), 'h-old')).toBe(false)
    expect(await s.sessions.create(sess('no-user', 99))).toBe(false)
    expect(await s.sessions.create(sess('no-user-hash', 99), 'h-a')).toBe(false)
    await s.users.setPasswordHash(1, 'h-new')
    expect(await s.sessions.create(sess('stale'), 'h-a')).toBe(false)
    expect(await s.sessions.create(sess('fresh'), 'h-new')).toBe(true)
    await s.users.update(1, { locked: true })
    expect(await s.sessions.create(sess('locked'))).toBe(false)
    expect(await s.sessions.create(sess('locked-hash'), 'h-new')).toBe(false)
    await s.users.update(1, { locked: false })
    expect((await s.sessions.listForUser(1)).map((x) => x.id)).toEqual([]) // the lock ended the others
    expect(await s.sessions.create(sess('again'), 'h-new')).toBe(true)
    expect((await s.sessions.listForUser(1)).map((x) => x.id)).toEqual(['again'])
  })

  test('sessions: login attempts reserved in a window, refused at the limit and past the row bound, cleared, swept', async () => {
    const s = await setup()
    const reserve = (subject: string, now: number, maxRows = 100) => s.sessions.reserveLoginAttempt(subject, now, 1000, 3, maxRows)
    expect(await reserve('u:1', T0)).toEqual({ reserved: true })
    expect(await reserve('u:1', T0 + 10)).toEqual({ reserved: true })
    expect(await reserve('u:1', T0 + 20)).toEqual({ reserved: true })
    // the limit: refused until the window ends (T0 + 1000), and the refusal counts nothing
    expect(await reserve('u:1', T0 + 30)).toEqual({ reserved: false, until: T0 + 1000 })
    expect(await reserve('u:1', T0 + 999)).toEqual({ reserved: false, until: T0 + 1000 })
    // subjects are exact strings (the caller folds names)
    expect(await reserve('U:1', T0 + 30)).toEqual({ reserved: true })
    // the window has ended: afresh, a new window from now
    expect(await reserve('u:1', T0 + 1000)).toEqual({ reserved: true })
    expect(await reserve('u:1', T0 + 1001)).toEqual({ reserved: true })
    expect(await reserve('u:1', T0 + 1002)).toEqual({ reserved: true })
    expect(await reserve('u:1', T0 + 1003)).toEqual({ reserved: false, until: T0 + 2000 })
    // a success forgets the subject's attempts
    await s.sessions.clearLoginAttempts('u:1')
    expect(await reserve('u:1', T0 + 1004)).toEqual({ reserved: true })
    await s.sessions.clearLoginAttempts('nobody')
    // the row bound: with 3 rows (u:1, U:1, n:1) a new subject is refused (until 0), a known one is not
    expect(await reserve('n:1', T0 + 1005)).toEqual({ reserved: true })
    expect(await reserve('n:2', T0 + 1006, 3)).toEqual({ reserved: false, until: 0 })
    expect(await reserve('n:1', T0 + 1007, 3)).toEqual({ reserved: true })
    expect(await reserve('n:3', T0 + 1008, 4)).toEqual({ reserved: true })
    // the sweep deletes the rows whose window has ended: U:1 (ended T0 + 1030), not the three live ones
    expect(await s.sessions.sweepLoginAttempts(T0 + 1500)).toBe(1)
    expect(await reserve('n:2', T0 + 1501, 4)).toEqual({ reserved: true })
    expect(await s.sessions.sweepLoginAttempts(T0 + 1_000_000)).toBe(4)
    expect(await s.sessions.sweepLoginAttempts(T0 + 1_000_000)).toBe(0)
  })

  test('sessions: 60 parallel reservations of one subject reserve exactly the limit', async () => {
    const s = await setup()
    const answers = await Promise.all(Array.from({ length: 60 }, () => s.sessions.reserveLoginAttempt('u:7', T0, 60_000, 10, 1000)))
    expect(answers.filter((a) => a.reserved).length).toBe(10)
    for (const a of answers) if (!a.reserved) expect(a.until).toBe(T0 + 60_000)
    expect(await s.sessions.reserveLoginAttempt('u:7', T0 + 1, 60_000, 10, 1000)).toEqual({ reserved: false, until: T0 + 60_000 })
  })

  test('settings: set once, the first value stays', async () => {
    const s = await setup()
    expect(await s.settings.get('k')).toBeUndefined()
    expect(await s.settings.setIfAbsent('k', 'one')).toBe('one')
    expect(await s.settings.setIfAbsent('k', 'two')).toBe('one')
    expect(await s.settings.get('k')).toBe('one')
    // several at once (replicas starting together): all answer the same stored value
    const answers = await Promise.all(['a', 'b', 'c', 'd'].map((v) => s.settings.setIfAbsent('race', v)))
    expect(new Set(answers).size).toBe(1)
  })

  test('tokens: by id, by secret with the owner, listings, changes, refresh, delete', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    const tok = (id: string, uid: number, created: number) => ({
      id, uid, name: `t${id}`, description: '', capabilities: ['Search', 'Download'], created, expires: 0,
    })
    await s.tokens.create(tok('t2', 1, T0 + 2), 'h2')
    await s.tokens.create(tok('t1', 1, T0 + 1), 'h1')
    await s.tokens.create(tok('t3', 2, T0), 'h3')
    expect(await s.tokens.get('t1')).toEqual(tok('t1', 1, T0 + 1))
    expect(await s.tokens.get('zz')).toBeUndefined()
    const found = await s.tokens.getBySecretHash('h3')
    // (the SQLite query answers the owner's name as the token's name: nothing reads it from this method)
    expect({ ...found, token: { ...found!.token, name: 'tt3' } }).toEqual({ token: tok('t3', 2, T0), secretHash: 'h3', user: (await s.users.get(2))! })
    expect(await s.tokens.getBySecretHash('nope')).toBeUndefined()
    expect((await s.tokens.listForUser(1)).map((t) => t.id)).toEqual(['t1', 't2'])
    expect((await s.tokens.listAll()).map((t) => t.id)).toEqual(['t1', 't2', 't3'])
    await s.tokens.update('t1', { name: 'n', description: 'd', capabilities: ['Stats'], expires: T0 + 99 })
    await s.tokens.update('t1', {})
    expect(await s.tokens.get('t1')).toEqual({ ...tok('t1', 1, T0 + 1), name: 'n', description: 'd', capabilities: ['Stats'], expires: T0 + 99 })
    await s.tokens.replaceSecret('t1', 'h1b', T0 + 100)
    expect(await s.tokens.getBySecretHash('h1')).toBeUndefined()
    expect((await s.tokens.getBySecretHash('h1b'))?.token.expires).toBe(T0 + 100)
    expect(await s.tokens.delete('t1')).toBe(true)
    expect(await s.tokens.delete('t1')).toBe(false)
    await s.users.delete(2)
    expect((await s.tokens.listAll()).map((t) => t.id)).toEqual(['t2'])
  })

  test('resources: visibility, sharing lists (also of groups not yet made), contents, blob references', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    const g = await s.groups.create('g', '')
    await s.groups.addMember(2, [g])
    const row = (guid: string, uid: number, modified: number, extra = {}) => ({
      guid, uid, name: guid, description: '', global: false, version: 0, size: 0, hash: '', blobKey: null as string | null,
      modified, domain: 0, labels: ['l'], gids: [] as number[], ...extra,
    })
    await s.resources.create(row('r-own', 1, T0 + 3))
    await s.resources.create(row('r-glob', 1, T0 + 2, { global: true }))
    await s.resources.create(row('r-shared', 1, T0 + 1, { gids: [77, g, g] }))
    await s.resources.create(row('r-b', 2, T0 + 4, { size: 2 ** 40, domain: 5 }))
    expect(await s.resources.get('r-shared')).toEqual(row('r-shared', 1, T0 + 1, { gids: [g, 77] }))
    expect(await s.resources.get('none')).toBeUndefined()
    expect((await s.resources.get('r-b'))?.size).toBe(2 ** 40)
    expect((await s.resources.listAll()).map((r) => r.guid)).toEqual(['r-shared', 'r-glob', 'r-own', 'r-b'])
    expect((await s.resources.listVisible(2)).map((r) => r.guid)).toEqual(['r-shared', 'r-glob', 'r-b'])
    expect((await s.resources.listVisible(1)).map((r) => r.guid)).toEqual(['r-shared', 'r-glob', 'r-own'])
    expect(await s.resources.sharedWith('r-shared', 2)).toBe(true)
    expect(await s.resources.sharedWith('r-shared', 1)).toBe(false)
    const updated = await s.resources.update('r-own', { name: 'N', description: 'D', global: true, gids: [5, 3], modified: T0 + 9 })
    expect(updated).toEqual(row('r-own', 1, T0 + 9, { name: 'N', description: 'D', global: true, gids: [3, 5] }))
    expect(await s.resources.update('none', { modified: 1 })).toBeUndefined()
    const set = await s.resources.setContents('r-own', { blobKey: 'k1', size: 10, hash: 'h', modified: T0 + 10 })
    expect(set).toEqual({ row: { ...updated!, blobKey: 'k1', size: 10, hash: 'h', modified: T0 + 10, version: 1 }, oldKey: null })
    expect((await s.resources.setContents('r-own', { blobKey: 'k2', size: 1, hash: 'h', modified: T0 + 11 }))?.oldKey).toBe('k1')
    expect(await s.resources.setContents('none', { blobKey: 'k', size: 1, hash: 'h', modified: 1 })).toBeUndefined()
    expect(await s.resources.blobReferences()).toEqual([{ key: 'k2', item: 'resource r-own' }])
    await s.groups.delete(g)
    expect((await s.resources.get('r-shared'))?.gids).toEqual([77])
    expect((await s.resources.delete('r-own'))?.blobKey).toBe('k2')
    expect(await s.resources.delete('r-own')).toBeUndefined()
  })

  test('files: several per GUID, shared marks, visibility, changes, contents, blob references', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    await user(s, 'c')
    const g = await s.groups.create('g', '')
    await s.groups.addMember(2, [g])
    const row = (thingUuid: string, guid: string, uid: number, updated: number, extra = {}) => ({
      thingUuid, guid, uid, name: thingUuid, description: '', global: false, size: 0, type: 'empty', labels: [] as string[],
      updated, blobKey: `b-${thingUuid}`, gids: [] as number[], ...extra,
    })
    await s.files.create(row('f1', 'G', 1, T0 + 2, { gids: [g] }))
    await s.files.create(row('f2', 'G', 3, T0 + 1))
    await s.files.create(row('f3', 'H', 1, T0 + 3, { global: true, labels: ['x'] }))
    expect(await s.files.get('f1')).toEqual(row('f1', 'G', 1, T0 + 2, { gids: [g] }))
    expect(await s.files.get('nope')).toBeUndefined()
    expect((await s.files.byGuid('G', 2)).map((f) => [f.thingUuid, f.shared])).toEqual([['f2', false], ['f1', true]])
    expect(await s.files.byGuid('none', 2)).toEqual([])
    expect(await s.files.sharedWith('f1', 2)).toBe(true)
    expect(await s.files.sharedWith('f2', 2)).toBe(false)
    expect((await s.files.listAll()).map((f) => f.thingUuid)).toEqual(['f2', 'f1', 'f3'])
    expect((await s.files.listVisible(2)).map((f) => f.thingUuid)).toEqual(['f1', 'f3'])
    const changed = await s.files.update('f2', { uid: 2, name: 'n', description: 'd', global: true, labels: ['q'], gids: [9], updated: T0 + 5 })
    expect(changed).toEqual(row('f2', 'G', 2, T0 + 5, { name: 'n', description: 'd', global: true, labels: ['q'], gids: [9] }))
    expect(await s.files.update('nope', { updated: 1 })).toBeUndefined()
    const set = await s.files.setContents('f2', { blobKey: 'new', size: 3, type: 'text/plain', updated: T0 + 6 })
    expect(set).toEqual({ row: { ...changed!, blobKey: 'new', size: 3, type: 'text/plain', updated: T0 + 6 }, oldKey: 'b-f2' })
    expect(await s.files.setContents('nope', { blobKey: 'x', size: 0, type: '', updated: 0 })).toBeUndefined()
    expect((await s.files.blobReferences()).sort((a, b) => a.key.localeCompare(b.key))).toEqual([
      { key: 'b-f1', item: 'file f1' }, { key: 'b-f3', item: 'file f3' }, { key: 'new', item: 'file f2' },
    ])
    expect((await s.files.delete('f1'))?.blobKey).toBe('b-f1')
    expect(await s.files.delete('f1')).toBeUndefined()
  })

  test('dashboards: random ids below 2^53 kept exactly, sharing, listings, changes', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    const g = await s.groups.create('g', '')
    await s.groups.addMember(2, [g])
    const row = (guid: string, uid: number, created: number, extra = {}) => ({
      guid, uid, name: guid, description: '', global: false, labels: [] as string[], data: '{"a": 1.50}', created, updated: created,
      gids: [] as number[], ...extra,
    })
    const d1 = await s.dashboards.create(row('G', 1, T0 + 2, { gids: [g, 4] }))
    const d2 = await s.dashboards.create(row('G', 2, T0 + 1))
    const d3 = await s.dashboards.create(row('H', 1, T0 + 3, { global: true }))
    for (const id of [d1, d2, d3]) expect(Number.isSafeInteger(id) && id > 0).toBe(true)
    expect(await s.dashboards.byId(d1, 2)).toEqual({ ...row('G', 1, T0 + 2, { gids: [4, g].sort((a, b) => a - b) }), id: d1, shared: true })
    expect((await s.dashboards.byId(d1, 1))?.shared).toBe(false)
    expect(await s.dashboards.byId(12345, 1)).toBeUndefined()
    expect((await s.dashboards.byGuid('G', 2)).map((d) => [d.id, d.shared])).toEqual([[d2, false], [d1, true]])
    expect((await s.dashboards.listAll()).map((d) => d.id)).toEqual([d2, d1, d3])
    expect((await s.dashboards.listVisible(2)).map((d) => d.id)).toEqual([d2, d1, d3])
    expect((await s.dashboards.listVisible(1)).map((d) => d.id)).toEqual([d1, d3])
    expect((await s.dashboards.listOwned(1)).map((d) => d.id)).toEqual([d1, d3])
    expect((await s.dashboards.listShared(g)).map((d) => d.id)).toEqual([d1])
    const changed = await s.dashboards.update(d2, {
      uid: 1, name: 'n', description: 'd', global: true, labels: ['l'], data: '[ 1 ]', gids: [], updated: T0 + 9,
    })
    expect(changed).toEqual({ ...row('G', 1, T0 + 1, { name: 'n', description: 'd', global: true, labels: ['l'], data: '[ 1 ]' }), id: d2, updated: T0 + 9 })
    expect(await s.dashboards.update(12345, { updated: 1 })).toBeUndefined()
    expect(await s.dashboards.delete(d1)).toBe(true)
    expect(await s.dashboards.delete(d1)).toBe(false)
    await s.users.delete(1)
    expect(await s.dashboards.listAll()).toEqual([])
  })

  test('library: several per GUID, shared marks, metadata kept as sent or null, changes', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    const g = await s.groups.create('g', '')
    await s.groups.addMember(2, [g])
    const row = (thingUuid: string, guid: string, uid: number, updated: number, extra = {}) => ({
      thingUuid, guid, uid, name: thingUuid, description: '', query: 'tag=x', global: false, labels: [] as string[],
      metadata: null as string | null, updated, gids: [] as number[], ...extra,
    })
    await s.library.create(row('l1', 'G', 1, T0 + 2, { gids: [g], metadata: '{"k" : [1]}' }))
    await s.library.create(row('l2', 'G', 2, T0 + 1))
    await s.library.create(row('l3', 'H', 1, T0 + 3))
    expect(await s.library.byThing('l1', 2)).toEqual({ ...row('l1', 'G', 1, T0 + 2, { gids: [g], metadata: '{"k" : [1]}' }), shared: true })
    expect(await s.library.byThing('none', 2)).toBeUndefined()
    expect((await s.library.byGuid('G', 2)).map((l) => [l.thingUuid, l.shared])).toEqual([['l2', false], ['l1', true]])
    expect((await s.library.listOwned(1)).map((l) => l.thingUuid)).toEqual(['l1', 'l3'])
    expect((await s.library.listAll()).map((l) => l.thingUuid)).toEqual(['l2', 'l1', 'l3'])
    const changed = await s.library.update('l1', {
      uid: 2, name: 'n', description: 'd', query: 'q', global: true, labels: ['z'], metadata: null, gids: [3, 1], updated: T0 + 8,
    })
    expect(changed).toEqual(row('l1', 'G', 2, T0 + 8, { name: 'n', description: 'd', query: 'q', global: true, labels: ['z'], gids: [1, 3] }))
    expect(await s.library.update('none', { updated: 1 })).toBeUndefined()
    expect(await s.library.delete('l1')).toBe(true)
    expect(await s.library.delete('l1')).toBe(false)
  })

  test('autoextractors: reach by owner, group and global, shared marks, changes, sharing lists', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    await user(s, 'c')
    const g = await s.groups.create('g', '')
    await s.groups.addMember(2, [g])
    const row = (uuid: string, uid: number, updated: number, extra = {}) => ({
      uuid, uid, name: uuid, description: '', labels: [] as string[], global: false, tags: ['web'], module: 'regex',
      params: '(?P<x>.)', args: '', updated, gids: [] as number[], ...extra,
    })
    await s.autoextractors.create(row('a1', 1, T0 + 2, { gids: [g], tags: ['web', 'app'], labels: ['l'] }))
    await s.autoextractors.create(row('a2', 2, T0 + 1))
    await s.autoextractors.create(row('a3', 1, T0 + 3))
    await s.autoextractors.create(row('a4', 3, T0 + 4, { global: true }))
    expect(await s.autoextractors.get('a1', 2)).toEqual({ ...row('a1', 1, T0 + 2, { gids: [g], tags: ['web', 'app'], labels: ['l'] }), shared: true })
    expect((await s.autoextractors.get('a1', 1))?.shared).toBe(false)
    expect(await s.autoextractors.get('none', 2)).toBeUndefined()
    expect((await s.autoextractors.listReachable(2)).map((a) => [a.uuid, a.shared])).toEqual([['a2', false], ['a1', true], ['a4', false]])
    expect((await s.autoextractors.listReachable(3)).map((a) => a.uuid)).toEqual(['a4'])
    expect((await s.autoextractors.listAll()).map((a) => a.uuid)).toEqual(['a2', 'a1', 'a3', 'a4'])
    const changed = await s.autoextractors.update('a1', {
      uid: 2, name: 'n', description: 'd', labels: [], global: true, tags: ['x'], module: 'csv', params: 'a, b', args: '-s', gids: [3, 1], updated: T0 + 8,
    })
    expect(changed).toEqual(row('a1', 2, T0 + 8, { name: 'n', description: 'd', global: true, tags: ['x'], module: 'csv', params: 'a, b', args: '-s', gids: [1, 3] }))
    expect(await s.autoextractors.update('a3', { updated: T0 + 9 })).toEqual(row('a3', 1, T0 + 9))
    expect(await s.autoextractors.update('none', { updated: 1 })).toBeUndefined()
    // a deleted group leaves every sharing list
    await s.groups.delete(g)
    expect((await s.autoextractors.get('a1', 2))?.gids).toEqual([1, 3].filter((x) => x !== g))
    expect(await s.autoextractors.delete('a1')).toBe(true)
    expect(await s.autoextractors.delete('a1')).toBe(false)
    expect((await s.autoextractors.listAll()).map((a) => a.uuid)).toEqual(['a2', 'a4', 'a3'])
  })

  test('entries: all-or-nothing batches, the walk in (ts, tag, id) order, wanted tags, the byte budget', async () => {
    const s = await setup()
    const bytes = (n: number, v: number) => new Uint8Array(n).fill(v)
    await s.entries.ingest([])
    await s.entries.ingest([
      { ts: T0 + 2, tag: 'b', src: '10.0.0.1', data: bytes(3, 1) },
      { ts: T0 + 1, tag: 'a', src: '10.0.0.2', data: bytes(4, 2) },
      { ts: T0 + 2, tag: 'a', src: '10.0.0.3', data: bytes(5, 3) },
    ])
    await s.entries.ingest([{ ts: T0 + 3, tag: 'b', src: '::1', data: new Uint8Array() }])
    const tags = new Map((await s.entries.allTags()).map((t) => [t.name, t.id]))
    expect([...tags.keys()].sort()).toEqual(['a', 'b'])
    const a = tags.get('a')!
    const b = tags.get('b')!
    const start = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
    const all = await s.entries.scan(null, start, T0 + 100, 100)
    expect(all.map((r) => [r.ts, r.tagId, r.src, [...(r.data ?? [])]])).toEqual([
      [T0 + 1, a, '10.0.0.2', [2, 2, 2, 2]],
      ...(a < b
        ? [[T0 + 2, a, '10.0.0.3', [3, 3, 3, 3, 3]], [T0 + 2, b, '10.0.0.1', [1, 1, 1]]]
        : [[T0 + 2, b, '10.0.0.1', [1, 1, 1]], [T0 + 2, a, '10.0.0.3', [3, 3, 3, 3, 3]]]),
      [T0 + 3, b, '::1', []],
    ])
    for (const r of all) expect(r.data).toBeInstanceOf(Uint8Array)
    // only tag b wanted: the others come without source and bytes
    const onlyB = await s.entries.scan([b], start, T0 + 100, 100)
    expect(onlyB.map((r) => [r.tagId, r.src === null, r.data === null])).toEqual(all.map((r) => [r.tagId, r.tagId !== b, r.tagId !== b]))
    expect(await s.entries.scan([], start, T0 + 100, 100).then((rows) => rows.every((r) => r.data === null))).toBe(true)
    // limit, the cursor, the end (exclusive)
    const first = await s.entries.scan(null, start, T0 + 100, 2)
    expect(first).toEqual(all.slice(0, 2))
    expect(await s.entries.scan(null, first.at(-1)!, T0 + 100, 10)).toEqual(all.slice(2))
    expect(await s.entries.scan(null, start, T0 + 2, 10)).toEqual(all.slice(0, 1))
    // the byte budget: stops at the entry that reaches it, and answers at least one
    expect(await s.entries.scan(null, start, T0 + 100, 10, 4)).toEqual(all.slice(0, 1))
    expect(await s.entries.scan(null, start, T0 + 100, 10, 5)).toEqual(all.slice(0, 2))
    expect(await s.entries.scan(null, start, T0 + 100, 10, 1)).toEqual(all.slice(0, 1))
    // a batch that fails stores nothing
    expect(await rejection(s.entries.ingest([{ ts: T0 + 50, tag: 'c', src: 'x', data: bytes(1, 0) }, { ts: T0 + 51, tag: 'c', src: null as never, data: bytes(1, 0) }]))).toBeInstanceOf(Error)
    expect(await s.entries.scan(null, start, T0 + 100, 100)).toEqual(all)
    await s.entries.ping()
    // the upper bound (inclusive) of a walk
    expect(await s.entries.scan(null, start, T0 + 100, 10, undefined, { upTo: all[2]! })).toEqual(all.slice(0, 3))
    expect(await s.entries.scan(null, all[0]!, T0 + 100, 10, undefined, { upTo: all[0]! })).toEqual([])
  })

  test('segments: registered with the deletion of their rows in one transaction, refused when a row is gone; listed by seq, referenced', async () => {
    const s = await setup()
    await s.entries.ingest(Array.from({ length: 6 }, (_, i) => ({ ts: T0 + i, tag: 'a', src: 's', data: new Uint8Array([i]) })))
    const start = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
    const rows = await s.entries.scan(null, start, T0 + 100, 100)
    const meta = (key: string, from: number, to: number) => ({
      key,
      count: to - from,
      bytes: 100,
      min: { ts: rows[from]!.ts, tagId: rows[from]!.tagId, id: rows[from]!.id },
      max: { ts: rows[to - 1]!.ts, tagId: rows[to - 1]!.tagId, id: rows[to - 1]!.id },
    })
    expect(await s.segments.latest()).toBe(0)
    expect(await s.segments.listAfter(0)).toEqual([])
    expect(await s.segments.register(meta('segments/one', 0, 3), rows.slice(0, 3).map((r) => r.id), T0)).toBe(true)
    expect(await s.entries.scan(null, start, T0 + 100, 100)).toEqual(rows.slice(3))
    // rows 2-4: row 2 is gone, so nothing changes
    expect(await s.segments.register(meta('segments/two', 2, 5), rows.slice(2, 5).map((r) => r.id), T0)).toBe(false)
    expect(await s.entries.scan(null, start, T0 + 100, 100)).toEqual(rows.slice(3))
    expect(await s.segments.register(meta('segments/three', 3, 5), rows.slice(3, 5).map((r) => r.id), T0)).toBe(true)
    const listed = await s.segments.listAfter(0)
    expect(listed.map(({ seq, ...m }) => m)).toEqual([meta('segments/one', 0, 3), meta('segments/three', 3, 5)])
    expect(listed[0]!.seq).toBeLessThan(listed[1]!.seq)
    expect(await s.segments.latest()).toBe(listed[1]!.seq)
    expect(await s.segments.listAfter(listed[0]!.seq)).toEqual([listed[1]!])
    expect(await s.segments.listAfter(listed[1]!.seq)).toEqual([])
    expect((await s.segments.blobReferences()).map((r) => r.key).sort()).toEqual(['segments/one', 'segments/three'])
    expect(await s.entries.scan(null, start, T0 + 100, 100)).toEqual(rows.slice(5))
  })

  test('removal: a segment replaced or removed once (compare-and-swap), journaled, seen in state(); rows deleted in batches; usage taken back', async () => {
    const s = await setup()
    const alice = await user(s, 'alice')
    const bob = await user(s, 'bob')
    const entry = (i: number, tag: string) => ({ ts: T0 + i, tag, src: 's', data: new Uint8Array([i, i]) })
    // alice ingests 3 entries of tag a, bob 1 of a and 2 of b: each entry counts 2 + 1 + 1 + 16 = 20 bytes.
    await s.entries.ingest([entry(0, 'a'), entry(1, 'a'), entry(2, 'a')], { owner: alice })
    await s.entries.ingest([entry(3, 'a'), entry(4, 'b'), entry(5, 'b')], { owner: bob })
    expect([await s.quota.usage(alice), await s.quota.usage(bob)]).toEqual([60, 60])
    const start = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
    const rows = await s.entries.scan(null, start, T0 + 100, 100)
    const [a, b] = [rows[0]!.tagId, rows[4]!.tagId]
    const meta = (key: string, from: number, to: number) => ({
      key,
      count: to - from,
      bytes: 100,
      min: { ts: rows[from]!.ts, tagId: rows[from]!.tagId, id: rows[from]!.id },
      max: { ts: rows[to - 1]!.ts, tagId: rows[to - 1]!.tagId, id: rows[to - 1]!.id },
    })
    expect(await s.segments.state()).toEqual({ seq: 0, removed: 0 })
    expect(await s.segments.register(meta('segments/one', 0, 2), rows.slice(0, 2).map((r) => r.id), T0)).toBe(true)
    const [one] = await s.segments.listAfter(0)
    expect(await s.segments.state()).toEqual({ seq: one!.seq, removed: 0 })
    // tag statistics: recorded once, for registered segments only
    const stats = [{ tagId: a, count: 2, bytes: 40, minTs: T0, maxTs: T0 + 1 }]
    await s.removal.putSegmentTags(one!.seq, stats)
    await s.removal.putSegmentTags(one!.seq, [{ tagId: a, count: 9, bytes: 9, minTs: 0, maxTs: 0 }])
    await s.removal.putSegmentTags(one!.seq + 100, stats)
    expect(await s.removal.segmentTags()).toEqual(new Map([[one!.seq, stats]]))

    // replaced by a segment of its second entry (the first deleted: 20 bytes of tag a, all alice's and bob's in 3:1)
    const next = { meta: meta('segments/two', 1, 2), tags: [{ tagId: a, count: 1, bytes: 20, minTs: T0 + 1, maxTs: T0 + 1 }] }
    expect(await s.removal.replaceSegment({ seq: one!.seq, key: 'segments/one' }, next, [{ tagId: a, bytes: 20 }], T0)).toBe(true)
    expect([await s.quota.usage(alice), await s.quota.usage(bob)]).toEqual([45, 55])
    // a second replacement of the same segment: refused, nothing changed
    expect(await s.removal.replaceSegment({ seq: one!.seq, key: 'segments/one' }, null, [{ tagId: a, bytes: 20 }], T0)).toBe(false)
    expect([await s.quota.usage(alice), await s.quota.usage(bob)]).toEqual([45, 55])
    const [two] = await s.segments.listAfter(0)
    expect(two).toMatchObject({ key: 'segments/two', count: 1 })
    expect(two!.seq).toBeGreaterThan(one!.seq)
    const afterReplace = await s.segments.state()
    expect(afterReplace.seq).toBe(two!.seq)
    expect(afterReplace.removed).toBeGreaterThan(0)
    expect(await s.removal.segmentTags()).toEqual(new Map([[two!.seq, next.tags]]))
    expect(await s.removal.pendingBlobRemovals()).toEqual([{ id: afterReplace.removed, key: 'segments/one' }])
    expect((await s.segments.blobReferences()).map((r) => r.key)).toEqual(['segments/two'])

    // removed without a replacement: the journal's id moves on; done rows are dropped but the latest
    expect(await s.removal.replaceSegment({ seq: two!.seq, key: 'segments/two' }, null, [{ tagId: a, bytes: 20 }], T0)).toBe(true)
    const afterRemove = await s.segments.state()
    expect(afterRemove.removed).toBeGreaterThan(afterReplace.removed)
    expect(await s.segments.listAfter(0)).toEqual([])
    expect((await s.removal.pendingBlobRemovals()).map((p) => p.key)).toEqual(['segments/one', 'segments/two'])
    await s.removal.blobsRemoved((await s.removal.pendingBlobRemovals()).map((p) => p.id))
    expect(await s.removal.pendingBlobRemovals()).toEqual([])
    expect(await s.segments.state()).toEqual(afterRemove)

    // rows: of one tag in [start, end), oldest first, at most `limit`; their bytes as the quota counts them
    expect(await s.removal.rowBytes(b)).toBe(40)
    expect(await s.removal.deleteRows(b, T0, T0 + 5, 10)).toEqual({ count: 1, bytes: 20 })
    expect(await s.removal.deleteRows(b, T0, T0 + 100, 10)).toEqual({ count: 1, bytes: 20 })
    expect(await s.removal.deleteRows(b, T0, T0 + 100, 10)).toEqual({ count: 0, bytes: 0 })
    // (the removal above took 15 from alice and 5 from bob: 45:15 of tag a)
    expect(await s.quota.usage(bob)).toBe(10)
    expect(await s.removal.deleteRows(a, T0, T0 + 100, 1)).toEqual({ count: 1, bytes: 20 })
    expect(await s.entries.scan(null, start, T0 + 100, 100)).toEqual([rows[3]!])
    expect(await s.removal.rowBytes(a)).toBe(20)
    expect([await s.quota.usage(alice), await s.quota.usage(bob)]).toEqual([15, 5])
    expect(await s.removal.replaceSegment({ seq: 999, key: 'x' }, null, [], T0)).toBe(false)

    // rules: replaced as a whole
    const rules = [
      { tag: '', maxAgeMs: 5000, maxBytes: null },
      { tag: 'web', maxAgeMs: null, maxBytes: 1024 },
    ]
    await s.removal.setRules(rules, T0)
    expect(await s.removal.rules()).toEqual(rules)
    await s.removal.setRules([rules[1]!], T0)
    expect(await s.removal.rules()).toEqual([rules[1]!])

    // deletions: pending first, then the finished ones, newest first
    const d1 = await s.removal.addDeletion({ tag: 'a', start: T0, end: T0 + 10, uid: alice }, T0)
    const d2 = await s.removal.addDeletion({ tag: 'b', start: T0, end: T0 + 10, uid: null }, T0 + 1)
    await s.removal.finishDeletion(d1, 7, T0 + 2)
    await s.removal.finishDeletion(d1, 8, T0 + 3)
    expect(await s.removal.deletions(10)).toEqual([
      { id: d2, tag: 'b', start: T0, end: T0 + 10, uid: null, created: T0 + 1, finished: null, deleted: 0 },
      { id: d1, tag: 'a', start: T0, end: T0 + 10, uid: alice, created: T0, finished: T0 + 2, deleted: 7 },
    ])
    expect(await s.removal.deletions(0)).toHaveLength(1)
  })

  test('cluster: replicas live by heartbeat, search records by live owner, a claim wins once', async () => {
    const s = await setup()
    const replica = (id: string, heartbeat: number) => ({ id, name: `${id}:80`, address: `http://${id}:80`, description: '{}', started: T0, heartbeat })
    const record = (id: string, owner: string, data = '{}') => ({ id, owner, uid: 1, gid: 0, started: T0, data, updated: T0 })
    await s.cluster.register(replica('a', T0))
    expect(await s.cluster.live(T0)).toEqual([replica('a', T0)])
    expect(await s.cluster.heartbeat('a', T0 + 10)).toBe(true)
    expect(await s.cluster.heartbeat('nobody', T0 + 10)).toBe(false)
    expect(await s.cluster.live(T0 + 10)).toEqual([replica('a', T0 + 10)])
    expect(await s.cluster.live(T0 + 11)).toEqual([])
    await s.cluster.putRecords([record('1', 'a', '{"v":1}'), record('2', 'a')])
    await s.cluster.putRecords([record('1', 'a', '{"v":2}')])
    // a record another replica owns is not overwritten by a put
    await s.cluster.putRecords([record('1', 'z', '{"v":3}')])
    expect(await s.cluster.liveRecords(T0)).toEqual([record('1', 'a', '{"v":2}'), record('2', 'a')])
    expect(await s.cluster.ownerOf('1', T0)).toEqual({ owner: 'a', address: 'http://a:80' })
    expect(await s.cluster.ownerOf('1', T0 + 11)).toBeUndefined()
    expect(await s.cluster.ownerOf('9', T0)).toBeUndefined()
    // a live owner keeps its search; the claim of a search whose owner is not live, or is named as unreachable, wins
    expect(await s.cluster.claim(record('1', 'b'), T0)).toBe(false)
    expect(await s.cluster.claim(record('1', 'b'), T0, 'a')).toBe(true)
    expect(await s.cluster.claim(record('2', 'b'), T0 + 11)).toBe(true)
    expect(await s.cluster.claim(record('3', 'b'), T0)).toBe(true)
    expect((await s.cluster.liveRecords(0)).map((r) => [r.id, r.owner])).toEqual([])
    await s.cluster.deleteRecords('a', ['3'])
    await s.cluster.deleteRecords('b', ['3'])
    // records whose owner is not live go with the sweep; so do long-dead replicas
    await s.cluster.register(replica('b', T0 + 20))
    expect((await s.cluster.liveRecords(T0)).map((r) => [r.id, r.owner])).toEqual([['1', 'b'], ['2', 'b']])
    await s.cluster.sweep(T0 + 20, T0 + 20)
    expect((await s.cluster.live(0)).map((r) => r.id)).toEqual(['b'])
    expect((await s.cluster.liveRecords(0)).map((r) => r.id)).toEqual(['1', '2'])
    await s.cluster.leave('b')
    expect(await s.cluster.live(0)).toEqual([])
    expect(await s.cluster.liveRecords(0)).toEqual([])
    // SQLite has one process per store: registering forgets the replicas of earlier runs; PostgreSQL keeps the others
    await s.cluster.register(replica('c', T0))
    await s.cluster.register(replica('d', T0))
    expect((await s.cluster.live(0)).map((r) => r.id)).toEqual(s.kind === 'sqlite' ? ['d'] : ['c', 'd'])
  })

  test('cluster: saving searches no live replica holds are marked failed, once, and nothing else', async () => {
    const s = await setup()
    await user(s, 'a')
    const row = (id: string, extra: Partial<SavedSearchRow> = {}): SavedSearchRow => ({
      id, uid: 1, gid: 0, state: 'saving', userQuery: 'q', effectiveQuery: 'q', startRange: T0, endRange: T0, started: T0, finished: 0,
      lastUpdate: T0 + 5, storeSize: 100, indexSize: 16, itemCount: 2, metadata: null, import: null,
      launchInfo: { background: true, client: 'session' }, noHistory: false, error: '', resultsKey: null, indexKey: null, ...extra,
    })
    const reason = 'lost_with its replica: 100% gone'
    await s.cluster.register({ id: 'live', name: 'live:80', address: 'http://live:80', description: '{}', started: T0, heartbeat: T0 + 100 })
    await s.cluster.putRecords([{ id: 'held', owner: 'live', uid: 1, gid: 0, started: T0, data: '{}', updated: T0 }])
    for (const r of [
      row('held'),
      row('orphan'),
      row('failed-move', { error: 'saving failed: S3 down', finished: T0 + 3 }),
      row('done', { state: 'saved', resultsKey: 'r', indexKey: 'i', finished: T0 + 1 }),
      row('young-import', { import: { time: T0, batchName: 'b', batchInfo: 'i' }, lastUpdate: T0 + 50 }),
      row('old-import', { import: { time: T0, batchName: 'b', batchInfo: 'i' }, lastUpdate: T0 + 10 }),
    ])
      await s.searches.putSaved(r)
    // the live replica's record keeps 'held'; the import written after T0 + 20 is still being moved
    expect((await s.cluster.failOrphanedSaves(T0 + 100, reason, T0 + 20)).sort()).toEqual(['failed-move', 'old-import', 'orphan'])
    expect(await s.searches.getSaved('orphan')).toEqual(row('orphan', { error: reason, finished: T0 + 5, storeSize: 0, indexSize: 0, itemCount: 0 }))
    expect((await s.searches.getSaved('failed-move'))?.finished).toBe(T0 + 3)
    expect(await s.searches.getSaved('held')).toEqual(row('held'))
    expect(await s.searches.getSaved('done')).toEqual(row('done', { state: 'saved', resultsKey: 'r', indexKey: 'i', finished: T0 + 1 }))
    expect(await s.searches.getSaved('young-import')).toEqual(row('young-import', { import: { time: T0, batchName: 'b', batchInfo: 'i' }, lastUpdate: T0 + 50 }))
    // marked once; once the live replica is no longer live, its search is an orphan too
    expect(await s.cluster.failOrphanedSaves(T0 + 100, reason, T0 + 20)).toEqual([])
    expect(await s.cluster.failOrphanedSaves(T0 + 101, reason, T0 + 20)).toEqual(['held'])
  })

  test('searches: saved rows upserted and listed, deleted with their row, history newest first, blob references', async () => {
    const s = await setup()
    await user(s, 'a')
    const saved = (id: string, started: number, extra: Partial<SavedSearchRow> = {}): SavedSearchRow => ({
      id, uid: 1, gid: 0, state: 'saving', userQuery: 'tag=a', effectiveQuery: 'tag=a', startRange: T0 - 1000, endRange: T0,
      started, finished: 0, lastUpdate: started, storeSize: 2 ** 33, indexSize: 10, itemCount: 3, metadata: { any: ['json', 1] },
      import: null, launchInfo: { background: true, client: 'token' }, noHistory: false, error: '', resultsKey: null, indexKey: null,
      ...extra,
    })
    await s.searches.putSaved(saved('200', T0 + 2))
    await s.searches.putSaved(saved('100', T0 + 1, { metadata: null, import: { time: T0, batchName: 'b', batchInfo: 'i' }, noHistory: true }))
    await s.searches.putSaved(saved('200', T0 + 2, { state: 'saved', resultsKey: 'r', indexKey: 'i', finished: T0 + 3 }))
    expect(await s.searches.listSaved()).toEqual([
      saved('100', T0 + 1, { metadata: null, import: { time: T0, batchName: 'b', batchInfo: 'i' }, noHistory: true }),
      saved('200', T0 + 2, { state: 'saved', resultsKey: 'r', indexKey: 'i', finished: T0 + 3 }),
    ])
    expect(await s.searches.savedExists('200')).toBe(true)
    expect(await s.searches.savedExists('300')).toBe(false)
    expect(await s.searches.getSaved('200')).toEqual(saved('200', T0 + 2, { state: 'saved', resultsKey: 'r', indexKey: 'i', finished: T0 + 3 }))
    expect(await s.searches.getSaved('300')).toBeUndefined()
    expect((await s.searches.blobReferences()).sort((x, y) => x.key.localeCompare(y.key))).toEqual([
      { key: 'i', item: 'search 200' }, { key: 'r', item: 'search 200' },
    ])
    // and the keys a search being saved (100) writes to, kept by the sweep though nothing points at them yet
    expect((await blobReferences(s)).filter((r) => r.pending).map((r) => r.key).sort()).toEqual(['searches/100/index', 'searches/100/results'])
    expect((await blobReferences(s)).length).toBe(4)
    expect((await s.searches.deleteSaved('200'))?.resultsKey).toBe('r')
    expect(await s.searches.deleteSaved('200')).toBeUndefined()
    for (const [i, launched] of [T0, T0 + 5, T0 + 5, T0 + 1].entries())
      await s.searches.addHistory({ uid: 1, gid: 0, userQuery: `q${i}`, effectiveQuery: `e${i}`, launched }, 1000)
    expect((await s.searches.history(1, 3)).map((h) => h.userQuery)).toEqual(['q2', 'q1', 'q3'])
    expect(await s.searches.history(1, 1)).toEqual([{ uid: 1, gid: 0, userQuery: 'q2', effectiveQuery: 'e2', launched: T0 + 5 }])
    expect(await s.searches.history(2, 10)).toEqual([])
    // keeping the newest 3 of a user drops their oldest (q0 and q3 here), and nothing of another user
    const other = await user(s, 'history-other')
    await s.searches.addHistory({ uid: other, gid: 0, userQuery: 'other', effectiveQuery: 'other', launched: T0 }, 3)
    await s.searches.addHistory({ uid: 1, gid: 0, userQuery: 'q4', effectiveQuery: 'e4', launched: T0 + 6 }, 3)
    expect((await s.searches.history(1, 10)).map((h) => h.userQuery)).toEqual(['q4', 'q2', 'q1'])
    expect((await s.searches.history(other, 10)).map((h) => h.userQuery)).toEqual(['other'])
  })

  test('quota: usage sums every counted area; guarded writes refused past the quota change nothing, shrinking always passes', async () => {
    const s = await setup()
    await user(s, 'a')
    await user(s, 'b')
    expect(await s.quota.usage(1)).toBe(0)
    const res = (guid: string, size: number, uid = 1) => ({
      guid, uid, name: guid, description: '', global: false, version: 0, size, hash: '', blobKey: `k-${guid}`, modified: T0, domain: 0,
      labels: [] as string[], gids: [] as number[],
    })
    const file = (thingUuid: string, size: number, uid = 1) => ({
      thingUuid, guid: 'G', uid, name: '', description: '', global: false, size, type: 't', labels: [] as string[], updated: T0,
      blobKey: `b-${thingUuid}`, gids: [] as number[],
    })
    // resources: the quota counts the row's size; undefined checks nothing
    await s.resources.create(res('r1', 600), 1000)
    expect(await s.quota.usage(1)).toBe(600)
    const over = await rejection(s.resources.create(res('r2', 401), 1000))
    expect(over).toBeInstanceOf(QuotaExceeded)
    expect(over).toMatchObject({ limit: 1000, used: 600, adding: 401 })
    expect(await s.resources.get('r2')).toBeUndefined()
    await s.resources.create(res('r2', 400), 1000) // exactly the quota
    await s.resources.create(res('r3', 5000)) // no quota given: not checked
    expect(await s.quota.usage(1)).toBe(6000)
    expect(await s.quota.usage(2)).toBe(0)
    // setContents: the new size minus the old; shrinking passes also over the quota
    expect(await rejection(s.resources.setContents('r1', { blobKey: 'n', size: 601, hash: '', modified: T0 }, 6000))).toMatchObject({ adding: 1 })
    expect((await s.resources.get('r1'))?.blobKey).toBe('k-r1')
    expect((await s.resources.setContents('r3', { blobKey: 'n3', size: 100, hash: '', modified: T0 }, 10))?.oldKey).toBe('k-r3')
    expect((await s.resources.setContents('r1', { blobKey: 'n1', size: 600, hash: '', modified: T0 }, 10))?.oldKey).toBe('k-r1') // same size
    expect(await s.resources.setContents('none', { blobKey: 'x', size: 1, hash: '', modified: T0 }, 10)).toBeUndefined()
    expect(await s.quota.usage(1)).toBe(1100)
    // files
    await s.files.create(file('f1', 100), 1200)
    expect(await rejection(s.files.create(file('f2', 1), 1200))).toBeInstanceOf(QuotaExceeded)
    expect(await s.files.get('f2')).toBeUndefined()
    await s.files.create(file('f2', 1, 2), 1) // another owner: their own usage
    expect(await rejection(s.files.setContents('f1', { blobKey: 'x', size: 101, type: 't', updated: T0 }, 1200))).toBeInstanceOf(QuotaExceeded)
    expect((await s.files.get('f1'))?.blobKey).toBe('b-f1')
    expect((await s.files.setContents('f1', { blobKey: 'x', size: 50, type: 't', updated: T0 }, 1))?.oldKey).toBe('b-f1')
    expect(await s.files.setContents('none', { blobKey: 'x', size: 1, type: '', updated: 0 }, 1)).toBeUndefined()
    expect(await s.quota.usage(1)).toBe(1150)
    expect(await s.quota.usage(2)).toBe(1)
    // saved searches: a 'saving' row is not counted nor checked; becoming 'saved' is, replacing a saved one counts the difference
    const saved = (id: string, state: 'saving' | 'saved', storeSize: number, indexSize: number): SavedSearchRow => ({
      id, uid: 1, gid: 0, state, userQuery: 'q', effectiveQuery: 'q', startRange: T0, endRange: T0, started: T0, finished: T0, lastUpdate: T0,
      storeSize, indexSize, itemCount: 1, metadata: null, import: null, launchInfo: { background: false, client: 'token' }, noHistory: false, error: '', resultsKey: null, indexKey: null,
    })
    await s.searches.putSaved(saved('s1', 'saving', 10_000, 0), 1200)
    expect(await s.quota.usage(1)).toBe(1150)
    expect(await rejection(s.searches.putSaved(saved('s1', 'saved', 40, 11), 1200))).toMatchObject({ used: 1150, adding: 51 })
    expect((await s.searches.listSaved())[0]?.state).toBe('saving')
    await s.searches.putSaved(saved('s1', 'saved', 40, 10), 1200)
    expect(await s.quota.usage(1)).toBe(1200)
    await s.searches.putSaved(saved('s1', 'saved', 30, 10), 1200) // shrinks
    expect(await rejection(s.searches.putSaved(saved('s1', 'saved', 41, 10), 1200))).toMatchObject({ adding: 11 })
    expect(await s.quota.usage(1)).toBe(1190)
    // dashboards: stored_bytes are the bytes of name, description, labels (as JSON) and data, set on every write
    const dash = (name: string, data: string, uid = 1) => ({
      guid: 'G', uid, name, description: 'é', global: false, labels: ['x'], data, created: T0, updated: T0, gids: [] as number[],
    })
    const dashBytes = (name: string, data: string) => Buffer.byteLength(name) + 2 + Buffer.byteLength('["x"]') + Buffer.byteLength(data)
    const d1 = await s.dashboards.create(dash('d', '{}'))
    expect(await s.quota.usage(1)).toBe(1190 + dashBytes('d', '{}'))
    const used = await s.quota.usage(1)
    expect(await rejection(s.dashboards.create(dash('d2', '{}'), used))).toBeInstanceOf(QuotaExceeded)
    expect((await s.dashboards.listOwned(1)).length).toBe(1)
    expect(await rejection(s.dashboards.update(d1, { data: '{"a":1}', updated: T0 + 1 }, used))).toMatchObject({ adding: 5 })
    expect((await s.dashboards.byId(d1, 1))?.data).toBe('{}')
    await s.dashboards.update(d1, { data: '{"a":1}', updated: T0 + 1 })
    expect(await s.quota.usage(1)).toBe(used + 5)
    await s.dashboards.update(d1, { data: '[]', updated: T0 + 2 }, 1) // shrinking passes
    expect(await s.quota.usage(1)).toBe(used)
    // moved to another owner: all its bytes count for the new one, checked against their quota
    expect(await rejection(s.dashboards.update(d1, { uid: 2, updated: T0 + 3 }, 1 + dashBytes('d', '[]') - 1))).toBeInstanceOf(QuotaExceeded)
    expect((await s.dashboards.byId(d1, 1))?.uid).toBe(1)
    await s.dashboards.update(d1, { uid: 2, updated: T0 + 3 }, 1 + dashBytes('d', '[]'))
    expect(await s.quota.usage(2)).toBe(1 + dashBytes('d', '[]'))
    expect(await s.quota.usage(1)).toBe(1190)
    expect(await s.dashboards.update(12345, { updated: 1 }, 1)).toBeUndefined()
    // library: name, description, query, labels and metadata
    const lib = (thingUuid: string, metadata: string | null) => ({
      thingUuid, guid: 'L', uid: 1, name: 'n', description: '', query: 'tag=x', global: false, labels: [] as string[], metadata, updated: T0,
      gids: [] as number[],
    })
    await s.library.create(lib('l1', null))
    expect(await s.quota.usage(1)).toBe(1190 + 1 + 5 + 2)
    expect(await rejection(s.library.create(lib('l2', '{}'), 1198 + 9))).toMatchObject({ used: 1198, adding: 10 })
    expect(await s.library.byThing('l2', 1)).toBeUndefined()
    expect(await rejection(s.library.update('l1', { metadata: '{"k":1}', updated: T0 + 1 }, 1200))).toMatchObject({ adding: 7 })
    expect((await s.library.byThing('l1', 1))?.metadata).toBeNull()
    await s.library.update('l1', { metadata: '{"k":1}', updated: T0 + 1 }, 1205)
    expect(await s.quota.usage(1)).toBe(1205)
    expect(await s.library.update('none', { updated: 1 }, 1)).toBeUndefined()
    // deleting frees
    await s.resources.delete('r3')
    expect(await s.quota.usage(1)).toBe(1105)
  })

  test('leases: one holder at a time, renewed by it, taken over once expired or released; runs recorded by the holder only', async () => {
    const s = await setup()
    const first = await s.leases.acquire('job', 'A', 60_000)
    expect(first?.lastRun).toBe(0)
    expect(Math.abs(first!.now - Date.now())).toBeLessThan(60_000) // the store's clock, in ms
    expect(await s.leases.acquire('job', 'B', 60_000)).toBeUndefined()
    expect(await s.leases.acquire('job', 'A', 60_000)).toBeDefined() // a renewal
    await s.leases.ran('job', 'B') // not the holder: nothing recorded
    expect((await s.leases.list()).map((l) => [l.name, l.holder, l.lastRun])).toEqual([['job', 'A', 0]])
    await s.leases.ran('job', 'A')
    const [row] = await s.leases.list()
    expect(row!.lastRun).toBeGreaterThan(0)
    expect(row!.expiresAt).toBeGreaterThan(row!.lastRun)
    // released by its holder (not by another): the next asker gets it, with the job's last run
    await s.leases.release('job', 'B')
    expect(await s.leases.acquire('job', 'C', 60_000)).toBeUndefined()
    await s.leases.release('job', 'A')
    expect(await s.leases.acquire('job', 'C', 60_000)).toEqual({ lastRun: row!.lastRun, now: expect.any(Number) })
    // expired: taken over
    expect(await s.leases.acquire('short', 'A', 1)).toBeDefined()
    await Bun.sleep(10)
    expect(await s.leases.acquire('short', 'B', 60_000)).toBeDefined()
    expect(await s.leases.acquire('short', 'A', 60_000)).toBeUndefined()
    // many holders asking at once for a new lease: exactly one gets it
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => s.leases.acquire('raced', `H${i}`, 60_000)))
    expect(answers.filter((a) => a !== undefined)).toHaveLength(1)
  })

  test('quota: parallel guarded writes of one owner never pass the quota together', async () => {
    const s = await setup()
    await user(s, 'a')
    const res = (guid: string) => ({
      guid, uid: 1, name: guid, description: '', global: false, version: 0, size: 300, hash: '', blobKey: null, modified: T0, domain: 0,
      labels: [] as string[], gids: [] as number[],
    })
    const file = (thingUuid: string) => ({
      thingUuid, guid: 'G', uid: 1, name: '', description: '', global: false, size: 300, type: 't', labels: [] as string[], updated: T0,
      blobKey: `b-${thingUuid}`, gids: [] as number[],
    })
    // 2000 bytes: 6 writes of 300 fit, the rest of 16 (resources and files interleaved) must be refused
    const writes = Array.from({ length: 16 }, (_, i) => (i % 2 ? s.files.create(file(`f${i}`), 2000) : s.resources.create(res(`r${i}`), 2000)))
    const settled = await Promise.allSettled(writes)
    expect(settled.filter((r) => r.status === 'fulfilled').length).toBe(6)
    for (const r of settled) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(QuotaExceeded)
    expect(await s.quota.usage(1)).toBe(1800)
  })
})

describeWithServers('PostgreSQL store: cluster guarantees', () => {
  test('replicas opening one new database together migrate it once', async () => {
    const db = await freshDatabase()
    try {
      const stores = await Promise.all([1, 2, 3, 4].map(() => createPgStore(db.url, { max: 2 })))
      const [first] = stores
      expect(await first!.users.count()).toBe(0)
      const { SQL } = await import('bun')
      const sql = new SQL(db.url, { max: 1 })
      const versions = (await sql.unsafe('SELECT version FROM schema_migrations ORDER BY version')) as { version: number }[]
      expect(versions.map((v) => v.version)).toEqual(PG_MIGRATIONS.map((m) => m.version))
      await sql.close()
      for (const s of stores) await s.close()
    } finally {
      await db.drop()
    }
  })

  test('the PostgreSQL migrations are SQLite\'s, version for version, by name', () => {
    expect(PG_MIGRATIONS.map((m) => [m.version, m.name])).toEqual(MIGRATIONS.map((m) => [m.version, m.name]))
  })

  test('a store from before migrations 9-11 keeps its default search groups and counts its dashboards and library entries', async () => {
    const db = await freshDatabase()
    const { SQL } = await import('bun')
    const sql = new SQL(db.url, { max: 1 })
    try {
      await sql.unsafe('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)')
      for (const m of PG_MIGRATIONS.filter((m) => m.version < 9)) {
        await sql.unsafe(m.sql)
        await sql.unsafe('INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, 0)', [m.version, m.name])
      }
      await sql.unsafe("INSERT INTO groups (gid, name) VALUES (1, 'g')")
      await sql.unsafe(`INSERT INTO users (uid, username, name, email, password_hash, created, default_gid)
        VALUES (1, 'a', 'a', 'a@x', 'h', 0, 1), (2, 'b', 'b', 'b@x', 'h', 0, NULL)`)
      await sql.unsafe("INSERT INTO dashboards (id, guid, uid, name, description, labels, data, created, updated) VALUES (7, 'G', 1, 'dé', '', '[]', '{}', 0, 0)")
      await sql.unsafe("INSERT INTO library (thing_uuid, guid, uid, name, query, labels, metadata, updated) VALUES ('l', 'L', 2, 'n', 'q', '[]', '{}', 0)")
      await sql.unsafe("INSERT INTO login_failures (username, failures, window_start) VALUES ('a', 1, 0)")
      const store = await createPgStore(db.url, { max: 2 })
      try {
        expect([(await store.users.get(1))!.defaultGid, (await store.users.get(2))!.defaultGid]).toEqual([1, null])
        expect(await store.quota.usage(1)).toBe(3 + 2 + 2) // 'dé', '[]', '{}'
        expect(await store.quota.usage(2)).toBe(1 + 1 + 2 + 2)
        expect(await store.sessions.reserveLoginAttempt('u:1', T0, 1000, 1, 10)).toEqual({ reserved: true })
        // the default search group has no foreign key any more, and a deleted group is cleared by the trigger
        await store.users.setDefaultGid(2, 99)
        expect((await store.users.get(2))!.defaultGid).toBe(99)
        expect(await store.groups.delete(1)).toBe(true)
        expect((await store.users.get(1))!.defaultGid).toBeNull()
      } finally {
        await store.close()
      }
    } finally {
      await sql.close()
      await db.drop()
    }
  })

  test('a bad URL or an unreachable server: the start stops with one clear line', async () => {
    const run = async (url: string) => {
      const proc = Bun.spawn([process.execPath, 'server/main.ts'], {
        env: {
          PATH: process.env.PATH,
          QUARRY_DATABASE_URL: url,
          QUARRY_SINGLE_SERVER: 'true',
          QUARRY_DATA_DIR: mkdtempSync(join(tmpdir(), 'quarry-pgbad-')),
          QUARRY_LISTEN: '127.0.0.1:0',
        },
        stderr: 'pipe',
        stdout: 'pipe',
      })
      const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
      return { code, lines: err.trim().split('\n') }
    }
    const bad = await run('mysql://x/y')
    expect(bad.code).toBe(2)
    expect(bad.lines).toHaveLength(1)
    expect(bad.lines[0]).toStartWith('quarry: invalid configuration: QUARRY_DATABASE_URL:')
    // a port nothing listens on (the test server's, plus one, refused at once on loopback)
    const url = new URL(testDatabaseUrl())
    url.port = '1'
    const unreachable = await run(url.toString())
    expect(unreachable.code).toBe(1)
    expect(unreachable.lines).toHaveLength(1)
    expect(unreachable.lines[0]).toStartWith('quarry: cannot open the PostgreSQL store at postgres://quarry:***@127.0.0.1:1/')
    expect(unreachable.lines[0]).not.toContain(new URL(testDatabaseUrl()).password)
  })
})

// The notifications repository's contract (plugins/notifications/repo.contract.ts; repo.test.ts runs it on SQLite).
if (withServers)
  notificationsContract('PostgreSQL', async () => {
    const db = await freshDatabase()
    const store = await createPgStore(db.url, { max: 8 })
    return { store, close: async () => (await store.close(), await db.drop()) }
  })
