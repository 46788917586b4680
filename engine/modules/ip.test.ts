import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { IPValue, parseIP } from '../value'
import { entry, normal, refusedAt, values } from './extractions.testkit'

describe('ip: arguments and normal form', () => {
  test.each([
    ['tag=x ip ipaddr', 'tag=x ip ipaddr'],
    ['tag=x ip ipaddr as IP', 'tag=x ip ipaddr as IP'],
    ['tag=x ip srcip==192.168.1.5', 'tag=x ip srcip == 192.168.1.5'],
    ['tag=x ip ipaddr !~ 10.0.0.0/24 ipaddr !~ 192.168.0.0/24', 'tag=x ip ipaddr !~ 10.0.0.0/24 ipaddr !~ 192.168.0.0/24'],
    ['tag=x ip -or -categorize a ~ PRIVATE b ~ fd00::/8', 'tag=x ip -or -categorize a ~ PRIVATE b ~ fd00::/8'],
  ])('%s → %s', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })
  test.each([
    ['tag=x ip', 8],
    ['tag=x ip a < 10.0.0.1', 9],
    ['tag=x ip a == host', 9],
    ['tag=x ip ok b ~ 10.0.0.0', 12],
    ['tag=x ip a ~ 10.0.0.0/33', 9],
    ['tag=x ip -v a', 9],
  ])('%s is refused at %d', (q, pos) => refusedAt(q, pos))
})

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'))
const u32 = (s: string) => s.split('.').reduce((a, b) => a * 256 + Number(b), 0)

describe('ip: conversion and filters, against arithmetic on the addresses', () => {
  test('subnet filters and equality on generated IPv4 addresses', () => {
    fc.assert(
      fc.property(fc.array(v4, { maxLength: 20 }), v4, fc.integer({ min: 0, max: 32 }), (ips, net, bits) => {
        const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0
        const inside = (a: string) => ((u32(a) & mask) >>> 0) === ((u32(net) & mask) >>> 0)
        const es = () => ips.map((a) => entry('d', { a: ` ${a} ` }))
        const got = (q: string) => values(q, es()).map((v) => String(v.a))
        expect(got(`tag=x ip a ~ ${net}/${bits}`)).toEqual(ips.filter(inside))
        expect(got(`tag=x ip a !~ ${net}/${bits}`)).toEqual(ips.filter((a) => !inside(a)))
        expect(got(`tag=x ip a == ${net}`)).toEqual(ips.filter((a) => a === net))
        expect(got(`tag=x ip a != ${net} a ~ ${net}/${bits}`)).toEqual(ips.filter((a) => a !== net && inside(a)))
        expect(got(`tag=x ip -or a == ${net} a ~ ${net}/${bits}`)).toEqual(ips.filter((a) => a === net || inside(a)))
      }),
    )
  })

  test('values become IP values (IPv6 in RFC 5952 form); what is no address sets nothing and fails filters', () => {
    const [got] = values('tag=x ip a b as B c', [entry('d', { a: '10.1.2.3', b: '2001:DB8:0:0::1', c: 'host' })])
    expect(got).toEqual({ a: parseIP('10.1.2.3')!, b: '2001:DB8:0:0::1', B: parseIP('2001:db8::1')!, c: 'host' })
    expect(String(got!.B)).toBe('2001:db8::1')
    expect(got!.a).toBeInstanceOf(IPValue)
    expect(values('tag=x ip c != 10.0.0.1', [entry('d', { c: 'host' }), entry('d')])).toEqual([])
  })

  test('PRIVATE, MULTICAST and -categorize', () => {
    const addrs = ['10.1.1.1', '172.20.0.1', '192.168.5.5', '127.0.0.1', '169.254.1.1', 'fd00::1', 'fe80::1', '224.0.0.5', '239.1.1.1', 'ff02::1', '8.8.8.8', '2001:db8::1', '172.32.0.1']
    const es = () => addrs.map((a) => entry('d', { a }))
    expect(values('tag=x ip a ~ PRIVATE', es()).map((v) => String(v.a))).toEqual(addrs.slice(0, 8))
    expect(values('tag=x ip a ~ MULTICAST', es()).map((v) => String(v.a))).toEqual(['224.0.0.5', '239.1.1.1', 'ff02::1'])
    expect(values('tag=x ip -categorize a', es()).map((v) => v.a_category)).toEqual([...Array(8).fill('PRIVATE'), 'MULTICAST', 'MULTICAST', 'PUBLIC', 'PUBLIC', 'PUBLIC'])
  })
})
