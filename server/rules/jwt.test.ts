// server/rules/jwt.ts against what it replaced (@elysiajs/jwt over jose): tokens signed before the change still verify,
// jose verifies ours, and every token that is not an unexpired HS256 one of this key is refused.
import { describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { jwtVerify } from 'jose'
import { Hs256 } from './jwt'

const KEY = 'compat-key-0123456789'
const NOW = Date.UTC(2026, 10, 25) // 2026-11-25
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')
const signed = (header: unknown, payload: unknown, key = KEY, hash = 'sha256') => {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac(hash, key).update(input).digest('base64url')}`
}

describe('HS256 JWTs', () => {
  test('a token @elysiajs/jwt 1.4.2 signed (sessions made before the upgrade) verifies; an expired one does not', () => {
    const hs = new Hs256(KEY)
    // sign({ sub: '7', jti: 'session-id-1', exp: 4102444800 }) and the same with exp 1700000000, by @elysiajs/jwt
    const live =
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJqdGkiOiJzZXNzaW9uLWlkLTEiLCJzdWIiOiI3IiwiZXhwIjo0MTAyNDQ0ODAwLCJpYXQiOjE3OTU2MzkzODl9.lngpu49jnCdOsauyDRZl56u7clCrlPCILxkFl_vaj2M'
    const expired =
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJqdGkiOiJzZXNzaW9uLWlkLTIiLCJzdWIiOiI3IiwiZXhwIjoxNzAwMDAwMDAwLCJpYXQiOjE3OTU2MzkzODl9.XgM9gNIORZWFLOyjonLVfgoNpFO5erECPCqfIs17lzs'
    expect(hs.verify(live, NOW)).toEqual({ jti: 'session-id-1', sub: '7', exp: 4102444800, iat: 1795639389 })
    expect(hs.verify(expired, NOW)).toBeUndefined()
    expect(new Hs256('another-key-0123456789').verify(live, NOW)).toBeUndefined()
  })

  test('jose verifies what it signs (a rollback to the previous version keeps the sessions), header HS256/JWT', async () => {
    const token = new Hs256(KEY).sign({ sub: '5', jti: 'abc', exp: Math.ceil(NOW / 1000) + 3600 }, NOW)
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(KEY), { algorithms: ['HS256'], currentDate: new Date(NOW) })
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(payload).toEqual({ sub: '5', jti: 'abc', exp: Math.ceil(NOW / 1000) + 3600, iat: Math.floor(NOW / 1000) })
    expect(new Hs256(KEY).verify(token, NOW)).toEqual(payload)
  })

  test('refused: alg none, another alg with the same key, another key, tampering, bad shapes, exp/nbf', () => {
    const hs = new Hs256(KEY)
    const claims = { sub: '1', jti: 'j', exp: NOW / 1000 + 60 }
    const good = signed({ alg: 'HS256', typ: 'JWT' }, claims)
    expect(hs.verify(good, NOW)).toEqual(claims)
    const [h, p, sig] = good.split('.') as [string, string, string]
    const refused = [
      `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`,
      `${b64({ alg: 'none', typ: 'JWT' })}.${p}.${sig}`,
      signed({ alg: 'none', typ: 'JWT' }, claims), // signed, but not saying HS256
      signed({ alg: 'HS512', typ: 'JWT' }, claims, KEY, 'sha512'),
      signed({ alg: 'HS512', typ: 'JWT' }, claims), // an HS256 MAC under another name
      signed({ alg: 'HS256', typ: 'JWT' }, claims, 'another-key'),
      signed({ alg: 'HS256', typ: 'JWT', crit: ['exp'] }, claims),
      signed({ alg: 'HS256', b64: false, crit: ['b64'] }, claims),
      `${h}.${b64({ ...claims, sub: '2' })}.${sig}`, // tampered payload
      `${h}.${p}.${sig.slice(0, -1)}`, // cut signature
      `${h}.${p}.${sig}=`, // padding is not base64url
      `${h}.${p}`,
      `${h}.${p}.${sig}.x`,
      '',
      signed({ alg: 'HS256' }, [claims]), // claims not an object
      signed({ alg: 'HS256' }, 'text'),
      signed(['HS256'], claims),
      `${h}.${Buffer.from('{not json').toString('base64url')}.${createHmac('sha256', KEY).update(`${h}.${Buffer.from('{not json').toString('base64url')}`).digest('base64url')}`,
      signed({ alg: 'HS256' }, { ...claims, exp: NOW / 1000 }), // expires now
      signed({ alg: 'HS256' }, { ...claims, exp: String(NOW / 1000 + 60) }),
      signed({ alg: 'HS256' }, { ...claims, nbf: NOW / 1000 + 10 }), // not yet valid
      signed({ alg: 'HS256' }, { ...claims, iat: 'yesterday' }),
    ]
    for (const token of refused) expect([token, hs.verify(token, NOW)]).toEqual([token, undefined])
    expect(() => new Hs256('')).toThrow()
  })
})
