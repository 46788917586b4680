// rsyslog and syslog-ng (Debian's, installed by test/syslog-install.sh) forwarding to Quarry's syslog listeners over
// TCP, UDP and TLS, each started by the test as a process of its own with a config file in a temporary directory and
// fed through a unix socket by `logger -u`. Each daemon also writes what it forwards to a file with the same
// template: a search then finds exactly those messages, byte for byte, under each listener's tag, with the sender's
// address and the time each message's header gives (read here independently), and the syslog module reads them.
import { afterAll, beforeAll, expect } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describeWithServers, testWithServers } from './services'
import { type Found, type SyslogServer, metric, selfSignedCertificate, startSyslogServer } from './syslog'

const COUNT = 60

/** rsyslogd's and syslog-ng's paths (and syslog-ng's module directory), installing them when they are missing. */
function installed(): { rsyslogd: string; syslogNg: string; ngModules: string } {
  const r = Bun.spawnSync(['bash', join(import.meta.dir, 'syslog-install.sh')], { stdout: 'pipe', stderr: 'inherit' })
  if (r.exitCode !== 0) throw new Error('test/syslog-install.sh failed (see above)')
  const out = r.stdout.toString()
  const rs = /^rsyslogd (\S+)$/m.exec(out)
  const ng = /^syslog-ng (\S+) (\S+)$/m.exec(out)
  if (!rs || !ng) throw new Error(`test/syslog-install.sh answered: ${out}`)
  return { rsyslogd: rs[1]!, syslogNg: ng[1]!, ngModules: ng[2]! }
}

/** The time in an RFC 5424 header, or in the RFC 3339 time after a PRI (rsyslog's forward format), in ms (truncated). */
function headerTime(m: string): number {
  const [, date, frac = '', zone] = /^<\d+>(?:1 )?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d) /.exec(m)!
  return Date.parse(`${date}.${frac.padEnd(3, '0').slice(0, 3)}${zone}`)
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
/** The time in an RFC 3164 header, read in UTC in the current year (the tests run far from a new year's eve). */
function bsdTime(m: string): number {
  const [, mon, day, h, mi, s] = /^<\d+>(\w{3}) ([ \d]\d) (\d\d):(\d\d):(\d\d) /.exec(m)!
  return Date.UTC(new Date().getUTCFullYear(), MONTHS.indexOf(mon!), Number(day), Number(h), Number(mi), Number(s))
}

/** Feeds `messages` to a daemon's unix socket through logger, as application `app`. */
async function feed(socket: string, app: string, messages: string[]) {
  const proc = Bun.spawn(['logger', '-u', socket, '-t', app, '-p', 'user.notice'], { stdin: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '', TZ: 'UTC' } })
  proc.stdin.write(messages.map((m) => `${m}\n`).join(''))
  await proc.stdin.end()
  if ((await proc.exited) !== 0) throw new Error(`logger -u ${socket} failed: ${await new Response(proc.stderr).text()}`)
}

/** Waits for `file` to hold `count` lines; answers them. */
async function linesOf(file: string, count: number): Promise<string[]> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const lines = existsSync(file) ? readFileSync(file, 'latin1').split('\n').filter((l) => l !== '') : []
    if (lines.length >= count || Date.now() > deadline) return lines
    await Bun.sleep(50)
  }
}

async function waitFor(file: string) {
  const deadline = Date.now() + 10_000
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} did not appear`)
    await Bun.sleep(20)
  }
}

/** Checks one listener's entries against the daemon's own copy of what it sent. */
async function expectForwarded(s: SyslogServer, tag: string, listener: string, sentFile: string, app: string, time: (m: string) => number, protocol: string) {
  const sent = await linesOf(sentFile, COUNT)
  expect(sent).toHaveLength(COUNT)
  const found: Found[] = await s.searchUntil(`tag=${tag}`, COUNT)
  expect(found.map((f) => f.bytes.toString('latin1')).sort()).toEqual([...sent].sort())
  for (const f of found) {
    expect(f.SRC).toBe('127.0.0.1')
    expect(Date.parse(f.TS)).toBe(time(f.text))
  }
  expect(await s.search(`tag=${tag} syslog Appname==${app} Message~"forwarded 17 "`)).toHaveLength(1)
  const m = await s.metrics()
  expect(metric(m, 'entries', listener, protocol)).toBe(COUNT)
  expect(metric(m, 'bytes', listener, protocol)).toBe(sent.reduce((n, l) => n + Buffer.byteLength(l, 'latin1'), 0))
}

const messages = (app: string) => Array.from({ length: COUNT }, (_, i) => `forwarded ${i} by ${app} ünïcode`)

describeWithServers('syslog from rsyslog', () => {
  let s: SyslogServer
  let dir: string
  let daemon: ReturnType<typeof Bun.spawn> | undefined
  beforeAll(async () => {
    const { rsyslogd } = installed()
    dir = mkdtempSync(join(tmpdir(), 'quarry-rsyslog-'))
    const { cert, key } = selfSignedCertificate(dir)
    s = await startSyslogServer({
      QUARRY_SYSLOG_TCP: '127.0.0.1:0',
      QUARRY_SYSLOG_UDP: '127.0.0.1:0',
      QUARRY_SYSLOG_TLS: '127.0.0.1:0',
      QUARRY_SYSLOG_TCP_TAG: 'rs-tcp',
      QUARRY_SYSLOG_UDP_TAG: 'rs-udp',
      QUARRY_SYSLOG_TLS_TAG: 'rs-tls',
      QUARRY_TLS_CERT: cert,
      QUARRY_TLS_KEY: key,
    })
    const conf = join(dir, 'rsyslog.conf')
    // Three forwards of every message: TCP octet-counted RFC 5424, UDP in rsyslog's forward format (RFC 3164 with an
    // RFC 3339 time), TLS (RFC 5425, gtls, the server's name checked) with LF framing; and the same templates to files.
    writeFileSync(
      conf,
      `global(workDirectory="${dir}" defaultNetstreamDriverCAFile="${cert}" maxMessageSize="64k")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="${dir}/in.sock" RateLimit.Interval="0")
template(name="p5424" type="string" string="<%PRI%>1 %TIMESTAMP:::date-rfc3339% %HOSTNAME% %APP-NAME% %PROCID% %MSGID% %STRUCTURED-DATA% %msg%")
template(name="p5424file" type="string" string="<%PRI%>1 %TIMESTAMP:::date-rfc3339% %HOSTNAME% %APP-NAME% %PROCID% %MSGID% %STRUCTURED-DATA% %msg%\\n")
template(name="fwdfile" type="string" string="<%PRI%>%TIMESTAMP:::date-rfc3339% %HOSTNAME% %syslogtag:1:32%%msg:::sp-if-no-1st-sp%%msg%\\n")
action(type="omfwd" target="127.0.0.1" port="${s.ports.tcp}" protocol="tcp" TCP_Framing="octet-counted" template="p5424")
action(type="omfile" file="${dir}/tcp.sent" template="p5424file")
action(type="omfwd" target="127.0.0.1" port="${s.ports.udp}" protocol="udp" template="RSYSLOG_ForwardFormat")
action(type="omfile" file="${dir}/udp.sent" template="fwdfile")
action(type="omfwd" target="127.0.0.1" port="${s.ports.tls}" protocol="tcp" StreamDriver="gtls" StreamDriverMode="1"
  StreamDriverAuthMode="x509/name" StreamDriverPermittedPeers="localhost" template="p5424")
action(type="omfile" file="${dir}/tls.sent" template="p5424file")
`,
    )
    daemon = Bun.spawn([rsyslogd, '-n', '-f', conf, '-i', join(dir, 'rsyslogd.pid')], { stdout: 'pipe', stderr: 'pipe' })
    await waitFor(join(dir, 'in.sock'))
    await feed(join(dir, 'in.sock'), 'rsapp', messages('rsapp'))
  }, 120_000)
  afterAll(async () => {
    daemon?.kill('SIGTERM')
    await daemon?.exited
    expect(await s.stop()).toBe(0)
    rmSync(dir, { recursive: true, force: true })
  })

  testWithServers('over TCP, octet-counted RFC 5424: exactly what it sent', () =>
    expectForwarded(s, 'rs-tcp', 'syslog-tcp', join(dir, 'tcp.sent'), 'rsapp', headerTime, 'rfc5424'), 60_000)
  testWithServers('over UDP, its forward format (RFC 3164 with an RFC 3339 time): exactly what it sent', () =>
    expectForwarded(s, 'rs-udp', 'syslog-udp', join(dir, 'udp.sent'), 'rsapp', headerTime, 'rfc3164'), 60_000)
  testWithServers('over TLS (RFC 5425, the certificate checked by name), LF framing: exactly what it sent', () =>
    expectForwarded(s, 'rs-tls', 'syslog-tls', join(dir, 'tls.sent'), 'rsapp', headerTime, 'rfc5424'), 60_000)
})

describeWithServers('syslog from syslog-ng', () => {
  let s: SyslogServer
  let dir: string
  let daemon: ReturnType<typeof Bun.spawn> | undefined
  beforeAll(async () => {
    const { syslogNg, ngModules } = installed()
    dir = mkdtempSync(join(tmpdir(), 'quarry-syslog-ng-'))
    const { cert, key } = selfSignedCertificate(dir)
    s = await startSyslogServer({
      QUARRY_SYSLOG_TCP: '127.0.0.1:0',
      QUARRY_SYSLOG_UDP: '127.0.0.1:0',
      QUARRY_SYSLOG_TLS: '127.0.0.1:0',
      QUARRY_SYSLOG_TCP_TAG: 'ng-tcp',
      QUARRY_SYSLOG_UDP_TAG: 'ng-udp',
      QUARRY_SYSLOG_TLS_TAG: 'ng-tls',
      QUARRY_TLS_CERT: cert,
      QUARRY_TLS_KEY: key,
    })
    const conf = join(dir, 'syslog-ng.conf')
    // syslog() is RFC 5424 with octet counting (RFC 6587, and RFC 5425 over TLS); network() over UDP is RFC 3164.
    // The files get the same formats (the drivers' own templates, spelt out) with an LF.
    writeFileSync(
      conf,
      `@version: 3.38
options { keep-hostname(yes); chain-hostnames(no); log-msg-size(65536); stats-freq(0); };
source s_in { unix-dgram("${dir}/in.sock"); };
destination d_tcp { syslog("127.0.0.1" port(${s.ports.tcp}) transport("tcp")); };
destination d_udp { network("127.0.0.1" port(${s.ports.udp}) transport("udp")); };
destination d_tls { syslog("127.0.0.1" port(${s.ports.tls}) transport("tls") tls(ca-file("${cert}") peer-verify(required-trusted))); };
destination f_5424 { file("${dir}/5424.sent" template("<\${PRI}>1 \${ISODATE} \${HOST} \${PROGRAM} \${PID:--} \${MSGID:--} \${SDATA:--} \${MSG}\\n")); };
destination f_3164 { file("${dir}/3164.sent" template("<\${PRI}>\${STAMP} \${HOST} \${MSGHDR}\${MSG}\\n") ts-format(bsd)); };
log { source(s_in); destination(d_tcp); destination(d_udp); destination(d_tls); destination(f_5424); destination(f_3164); };
`,
    )
    daemon = Bun.spawn(
      [syslogNg, '-F', '-f', conf, '--module-path', ngModules, '--persist-file', join(dir, 'persist'), '--pidfile', join(dir, 'pid'), '--control', join(dir, 'ctl'), '--no-caps'],
      { stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '', LD_LIBRARY_PATH: join(ngModules, '..') } },
    )
    await waitFor(join(dir, 'in.sock'))
    await feed(join(dir, 'in.sock'), 'ngapp', messages('ngapp'))
  }, 120_000)
  afterAll(async () => {
    daemon?.kill('SIGTERM')
    await daemon?.exited
    expect(await s.stop()).toBe(0)
    rmSync(dir, { recursive: true, force: true })
  })

  testWithServers('over TCP, syslog() (RFC 5424, octet counting): exactly what it sent', () =>
    expectForwarded(s, 'ng-tcp', 'syslog-tcp', join(dir, '5424.sent'), 'ngapp', headerTime, 'rfc5424'), 60_000)
  testWithServers('over UDP, network() (RFC 3164): exactly what it sent, its time read in UTC', () =>
    expectForwarded(s, 'ng-udp', 'syslog-udp', join(dir, '3164.sent'), 'ngapp', bsdTime, 'rfc3164'), 60_000)
  testWithServers('over TLS, syslog() (RFC 5425, the certificate checked): exactly what it sent', () =>
    expectForwarded(s, 'ng-tls', 'syslog-tls', join(dir, '5424.sent'), 'ngapp', headerTime, 'rfc5424'), 60_000)
})
