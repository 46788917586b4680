// The syslog listeners of the real server process, fed by util-linux's `logger` (RFC 5424 and RFC 3164, TCP with
// either framing, UDP) and by raw sockets for what no client sends on purpose (bad frames, oversize messages,
// invalid UTF-8, floods of connections). Each sends, then a search over HTTP finds exactly what was sent: the
// messages as logger printed them (`-s`), their times read independently here, the tag, the sender's address, and
// the syslog module's fields; bad input is counted under its reason in /metrics and the server still answers.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStoreAt, spawnServer } from './helpers'
import { type Found, type SyslogServer, metric, selfSignedCertificate, startSyslogServer } from './syslog'

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** The time an RFC 5424 message's header gives (milliseconds, fraction truncated), read with a regular expression. */
function time5424(m: string): number {
  const [, date, frac = '', zone] = /^<\d+>1 (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d) /.exec(m)!
  return Date.parse(`${date}.${frac.padEnd(3, '0').slice(0, 3)}${zone}`)
}

/** The time an RFC 3164 message's header gives, in UTC, in the year of `now` (the tests run far from a new year's eve). */
function time3164(m: string, now = Date.now()): number {
  const [, mon, day, h, mi, s] = /^<\d+>(\w{3}) ([ \d]\d) (\d\d):(\d\d):(\d\d) /.exec(m)!
  return Date.UTC(new Date(now).getUTCFullYear(), MONTHS.indexOf(mon!), Number(day), Number(h), Number(mi), Number(s))
}

/** Runs logger with `args`, the messages on stdin (one per line); answers the messages as it sent them (its -s copy). */
async function logger(args: string[], messages: string[]): Promise<string[]> {
  const proc = Bun.spawn(['logger', '-s', ...args], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '', TZ: 'UTC' } })
  proc.stdin.write(messages.map((m) => `${m}\n`).join(''))
  await proc.stdin.end()
  const [code, err] = [await proc.exited, await new Response(proc.stderr).text()]
  if (code !== 0) throw new Error(`logger failed (${code}): ${err}`)
  return err.split('\n').filter((l) => l !== '')
}

/** Sends `bytes` on one TCP connection and closes it once the server has read them (it answers nothing). */
function sendTcp(port: number, ...chunks: (string | Buffer)[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', async () => {
      for (const c of chunks) s.write(c)
      s.end()
    })
    s.on('error', reject)
    s.on('close', () => resolve())
  })
}

const texts = (found: Found[]) => found.map((f) => f.text).sort()

let s: SyslogServer
beforeAll(async () => {
  s = await startSyslogServer({
    QUARRY_SYSLOG_TCP: '127.0.0.1:0',
    QUARRY_SYSLOG_UDP: '127.0.0.1:0',
    QUARRY_SYSLOG_UDP_TAG: 'syslog-udp',
    QUARRY_SYSLOG_MAX_MESSAGE: '1KiB',
    QUARRY_SYSLOG_FRAME_TIMEOUT: '300ms',
  })
}, 30_000)
afterAll(async () => {
  expect(await s.stop()).toBe(0)
})

describe('syslog from logger', () => {
  test('the start names each listener, its address and tag, with the port it got', () => {
    const started = s.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'syslog listening')
    expect(started.map((l) => [l.transport, l.address, l.tag])).toEqual([
      ['tcp', `127.0.0.1:${s.ports.tcp}`, 'syslog'],
      ['udp', `127.0.0.1:${s.ports.udp}`, 'syslog-udp'],
    ])
  })

  const cases = [
    { name: 'TCP, octet counting, RFC 5424', args: ['--tcp', '--octet-count', '--rfc5424'], app: 'tcp5424', tag: 'syslog', port: 'tcp', time: time5424, protocol: 'rfc5424' },
    { name: 'TCP, LF lines, RFC 3164', args: ['--tcp', '--rfc3164'], app: 'tcp3164', tag: 'syslog', port: 'tcp', time: time3164, protocol: 'rfc3164' },
    { name: 'UDP, RFC 5424', args: ['--udp', '--rfc5424'], app: 'udp5424', tag: 'syslog-udp', port: 'udp', time: time5424, protocol: 'rfc5424' },
    { name: 'UDP, RFC 3164', args: ['--udp', '--rfc3164'], app: 'udp3164', tag: 'syslog-udp', port: 'udp', time: time3164, protocol: 'rfc3164' },
  ] as const
  for (const c of cases)
    test(`${c.name}: a search finds exactly what was sent, with its time, tag and source, and the syslog module reads it`, async () => {
      const listener = `syslog-${c.port}`
      const before = await s.metrics()
      const messages = Array.from({ length: 40 }, (_, i) => `message ${i} of ${c.app} with ünïcode`)
      let sent = await logger([...c.args, '-n', '127.0.0.1', '-P', String(s.ports[c.port]), '-t', c.app, '-p', 'local3.warning'], messages)
      // with --octet-count logger prints the frame: the message is what its count says
      if ((c.args as readonly string[]).includes('--octet-count'))
        sent = sent.map((frame) => {
          const [, count, message] = /^(\d+) (.*)$/s.exec(frame)!
          expect(Buffer.byteLength(message!)).toBe(Number(count))
          return message!
        })
      expect(sent).toHaveLength(40)
      const found = await s.searchUntil(`tag=${c.tag} syslog Appname==${c.app}`, 40)
      expect(texts(found)).toEqual([...sent].sort())
      for (const f of found) {
        expect(f.Tag).toBe(c.tag)
        expect(f.SRC).toBe('127.0.0.1')
        expect(Date.parse(f.TS)).toBe(c.time(f.text))
      }
      // the module's fields: the host logger names, the facility and severity of -p, the message
      expect(await s.search(`tag=${c.tag} syslog Hostname==${JSON.stringify(hostname())} Appname==${c.app} Facility==19 Severity==4 Message~"message 7 of"`)).toHaveLength(1)
      const after = await s.metrics()
      expect(metric(after, 'entries', listener, c.protocol) - metric(before, 'entries', listener, c.protocol)).toBe(40)
      const bytes = sent.reduce((n, m) => n + Buffer.byteLength(m), 0)
      expect(metric(after, 'bytes', listener, c.protocol) - metric(before, 'bytes', listener, c.protocol)).toBe(bytes)
    }, 30_000)
})

describe('syslog bad input', () => {
  test('a frame cut off by the close, and one never completed, store nothing and are counted; the server answers', async () => {
    const before = await s.metrics()
    await sendTcp(s.ports.tcp!, '9 <13>alpha', '80 <13>1 - h cutoff - - - truncated')
    // a frame held past QUARRY_SYSLOG_FRAME_TIMEOUT: the server closes the connection itself
    const closedByServer = await new Promise<boolean>((resolve) => {
      const sock = connect(s.ports.tcp!, '127.0.0.1', () => sock.write('60 <13>1 - h stuck - - - never completed'))
      sock.on('close', () => resolve(true))
      sock.on('error', () => resolve(true))
    })
    expect(closedByServer).toBe(true)
    expect(texts(await s.searchUntil('tag=syslog grep "<13>alpha"', 1))).toEqual(['<13>alpha'])
    expect(await s.search('tag=syslog grep cutoff')).toEqual([])
    expect(await s.search('tag=syslog grep stuck')).toEqual([])
    const after = await s.metrics()
    expect(metric(after, 'refusals', 'syslog-tcp', 'frame', 'invalid') - metric(before, 'refusals', 'syslog-tcp', 'frame', 'invalid')).toBe(2)
    expect((await fetch(`${s.url}/api/version`)).status).toBeLessThan(500)
  }, 30_000)

  test('wrong octet counts: a count of 0 is refused, a short count cuts the message where it says', async () => {
    const before = await s.metrics()
    await sendTcp(s.ports.tcp!, '0 8 <13>zero', '8 <13>short rest\n', '8 <13>last')
    expect(texts(await s.searchUntil('tag=syslog grep "<13>zero" "<13>shor" "t rest" "<13>last"', 4))).toEqual(['<13>last', '<13>shor', '<13>zero', 't rest'])
    const after = await s.metrics()
    expect(metric(after, 'refusals', 'syslog-tcp', 'frame', 'invalid') - metric(before, 'refusals', 'syslog-tcp', 'frame', 'invalid')).toBe(1)
  }, 30_000)

  test('invalid UTF-8 is stored byte for byte, over TCP and UDP', async () => {
    const bad = Buffer.concat([Buffer.from('<13>1 2020-01-02T03:04:05.678Z badhost badutf - - - '), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x80])])
    await sendTcp(s.ports.tcp!, `${bad.length} `, bad)
    const udp = await Bun.udpSocket({})
    udp.send(bad, s.ports.udp!, '127.0.0.1')
    const at = Date.UTC(2020, 0, 2, 3, 4, 5, 678)
    const tcpFound = await s.searchUntil('tag=syslog syslog Hostname==badhost', 1, at - 1000, at + 1000)
    const udpFound = await s.searchUntil('tag=syslog-udp syslog Hostname==badhost', 1, at - 1000, at + 1000)
    udp.close()
    for (const f of [...tcpFound, ...udpFound]) {
      expect(f.bytes.equals(bad)).toBe(true)
      expect(Date.parse(f.TS)).toBe(Date.UTC(2020, 0, 2, 3, 4, 5, 678))
    }
    expect(tcpFound).toHaveLength(1)
    expect(udpFound).toHaveLength(1)
  }, 30_000)

  test('messages over QUARRY_SYSLOG_MAX_MESSAGE are dropped whole and counted; what follows them is stored', async () => {
    const before = await s.metrics()
    const big = `<13>1 - h oversize - - - ${'x'.repeat(2000)}`
    await sendTcp(s.ports.tcp!, `${big.length} ${big}`, '10 <13>after1', `${big}\n`, '<13>after2\n')
    const udp = await Bun.udpSocket({})
    udp.send(big, s.ports.udp!, '127.0.0.1')
    udp.send('<13>after3', s.ports.udp!, '127.0.0.1')
    expect(texts(await s.searchUntil('tag=syslog,syslog-udp grep "<13>after"', 3))).toEqual(['<13>after1', '<13>after2', '<13>after3'])
    udp.close()
    expect(await s.search('tag=syslog,syslog-udp grep oversize')).toEqual([])
    const after = await s.metrics()
    expect(metric(after, 'refusals', 'syslog-tcp', 'frame', 'too-large') - metric(before, 'refusals', 'syslog-tcp', 'frame', 'too-large')).toBe(2)
    expect(metric(after, 'refusals', 'syslog-udp', 'frame', 'too-large') - metric(before, 'refusals', 'syslog-udp', 'frame', 'too-large')).toBe(1)
  }, 30_000)

  test('a flood of connections: those past QUARRY_SYSLOG_MAX_CONNECTIONS are closed at once and counted, the others are served', async () => {
    // a server of its own: no connection of another test may still count toward the bound
    const s = await startSyslogServer({ QUARRY_SYSLOG_TCP: '127.0.0.1:0', QUARRY_SYSLOG_MAX_CONNECTIONS: '8' })
    const before = await s.metrics()
    const open: ReturnType<typeof connect>[] = []
    let closed = 0
    await Promise.all(
      Array.from({ length: 30 }, () =>
        new Promise<void>((resolve) => {
          const sock = connect(s.ports.tcp!, '127.0.0.1', () => resolve())
          sock.on('close', () => void closed++)
          sock.on('error', () => resolve())
          open.push(sock)
        }),
      ),
    )
    const deadline = Date.now() + 10_000
    while (closed < 22 && Date.now() < deadline) await Bun.sleep(20)
    expect(closed).toBe(22)
    // the HTTP port answers meanwhile, and the 8 connections kept are read
    expect((await fetch(`${s.url}/api/version`)).status).toBeLessThan(500)
    const alive = open.filter((c) => !c.closed)
    expect(alive).toHaveLength(8)
    alive.forEach((c, i) => c.write(`<13>kept ${i}\n`))
    expect(await s.searchUntil('tag=syslog grep "<13>kept"', 8)).toHaveLength(8)
    const after = await s.metrics()
    expect(metric(after, 'refusals', 'syslog-tcp', 'frame', 'busy') - metric(before, 'refusals', 'syslog-tcp', 'frame', 'busy')).toBe(22)
    for (const c of alive) c.end()
    expect(await s.stop()).toBe(0)
  }, 30_000)
})

describe('syslog start and stop', () => {
  test('TLS without the server certificate, or a bad address, stops the start with one line (exit 2)', async () => {
    for (const [env, words] of [
      [{ QUARRY_SYSLOG_TLS: '127.0.0.1:0' }, 'QUARRY_SYSLOG_TLS: needs the server\'s certificate'],
      [{ QUARRY_SYSLOG_TCP: 'nowhere' }, 'QUARRY_SYSLOG_TCP: "nowhere" must be host:port'],
    ] as const) {
      const proc = spawnServer({ QUARRY_DATA_DIR: join(tmpdir(), `quarry-syslog-never-${process.pid}`), ...env })
      expect(await proc.exited).toBe(2)
      const err = (await new Response(proc.stderr).text()).trim()
      expect(err.split('\n')).toHaveLength(1)
      expect(err).toContain(words)
    }
  })

  test('a syslog port in use stops the start with one line naming it (exit 1)', async () => {
    const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const dir = mkdtempSync(join(tmpdir(), 'quarry-syslog-inuse-'))
    try {
      const proc = spawnServer({ QUARRY_DATA_DIR: dir, QUARRY_ADMIN_PASSWORD: 'admin-password-1', QUARRY_MIN_FREE_SPACE: '0', QUARRY_SYSLOG_TCP: `127.0.0.1:${taken.port}` })
      expect(await proc.exited).toBe(1)
      expect(await new Response(proc.stderr).text()).toContain(`quarry: cannot listen for syslog over TCP on 127.0.0.1:${taken.port}: address in use`)
    } finally {
      taken.stop(true)
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('SIGTERM: what the listeners read is stored before the store closes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-syslog-stop-'))
    const t = await startSyslogServer({ QUARRY_SYSLOG_TCP: '127.0.0.1:0' }, dir)
    const dataDir = join(dir, 'data')
    const lines = Array.from({ length: 5000 }, (_, i) => `<13>1 - h stopping - - - message ${i}\n`)
    await sendTcp(t.ports.tcp!, lines.join(''))
    // the stop comes right after the sender closed: the listener may still hold batches, which must reach the store
    const exited = t.stopKeepingData()
    expect(await exited).toBe(0)
    const store = await openStoreAt(dataDir)
    try {
      const rows = await store.rows('SELECT count(*) AS n FROM entries')
      expect(Number(rows[0]!.n)).toBe(5000)
    } finally {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})

describe('syslog over TLS', () => {
  test('RFC 5425: octet-counted and LF-framed messages over TLS with the server certificate, found with their tag and source', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-syslog-tls-'))
    const { cert, key } = selfSignedCertificate(dir)
    const t = await startSyslogServer(
      { QUARRY_SYSLOG_TLS: '127.0.0.1:0', QUARRY_SYSLOG_TLS_TAG: 'secure', QUARRY_TLS_CERT: cert, QUARRY_TLS_KEY: key, QUARRY_SYSLOG_FRAME_TIMEOUT: '300ms' },
      dir,
    )
    try {
      // a connection that never starts its handshake is closed by the frame timeout, and counted
      const stalled = await new Promise<boolean>((resolve) => {
        const sock = connect(t.ports.tls!, '127.0.0.1')
        sock.on('close', () => resolve(true))
        sock.on('error', () => resolve(true))
      })
      expect(stalled).toBe(true)
      expect(metric(await t.metrics(), 'refusals', 'syslog-tls', 'frame', 'invalid')).toBe(1)
      const m1 = '<13>1 2026-01-02T03:04:05.006Z tlshost tlsapp - - - over tls, counted'
      const m2 = '<13>1 2026-01-02T03:04:06Z tlshost tlsapp - - - over tls, a line'
      await new Promise<void>((resolve, reject) => {
        // checked against the server's certificate by name, as rsyslog's x509/name mode does
        const sock = tlsConnect({ host: '127.0.0.1', port: t.ports.tls!, servername: 'localhost', ca: readFileSync(cert) }, () => {
          sock.end(`${Buffer.byteLength(m1)} ${m1}${m2}\n`)
        })
        sock.on('error', reject)
        sock.on('close', () => resolve())
      })
      const at = Date.UTC(2026, 0, 2, 3, 4, 5)
      const found = await t.searchUntil('tag=secure syslog Hostname==tlshost Appname==tlsapp', 2, at - 1000, at + 2000)
      expect(found.map((f) => [f.text, f.SRC, Date.parse(f.TS)])).toEqual([
        [m1, '127.0.0.1', at + 6],
        [m2, '127.0.0.1', at + 1000],
      ])
      expect(metric(await t.metrics(), 'entries', 'syslog-tls', 'rfc5424')).toBe(2)
    } finally {
      expect(await t.stop()).toBe(0)
    }
  }, 30_000)
})
