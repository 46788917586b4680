// deploy/container-cli.ts: the address `quarry` inside the container talks to by default, from QUARRY_LISTEN and
// QUARRY_TLS_CERT (test/container.sh runs it in a real container, on a port other than 8080).
import { describe, expect, test } from 'bun:test'
import { ownServerUrl } from '../deploy/container-cli'
import { readinessUrl } from '../server/http/healthcheck'

describe('container CLI: its own server', () => {
  test('the address of QUARRY_LISTEN from inside, as the HEALTHCHECK asks it', () => {
    const cases: [string | undefined, boolean, string][] = [
      [undefined, false, 'http://127.0.0.1:8080'],
      ['', false, 'http://127.0.0.1:8080'],
      ['0.0.0.0:8181', false, 'http://127.0.0.1:8181'],
      ['127.0.0.1:9000', false, 'http://127.0.0.1:9000'],
      ['[::]:8443', true, 'https://[::1]:8443'],
      ['[::1]:8080', false, 'http://[::1]:8080'],
      ['10.1.2.3:80', true, 'https://10.1.2.3:80'],
    ]
    for (const [listen, tls, url] of cases) {
      expect([listen, tls, ownServerUrl(listen, tls)]).toEqual([listen, tls, url])
      // the same host and port as the container's HEALTHCHECK asks (it speaks plain http: not for TLS servers)
      if (!tls && listen) expect(readinessUrl(listen)).toBe(`${url}/api/health/ready`)
    }
  })

  test('a QUARRY_LISTEN the server would refuse leaves the CLI its own default', () => {
    for (const listen of ['8080', 'localhost', ':x', '0.0.0.0:99999']) expect(ownServerUrl(listen, false)).toBeUndefined()
  })
})
