// The client's address as an operator wants it in logs, session Origins and login records: the TCP peer, unless
// that peer is one of the reverse proxies named by QUARRY_TRUSTED_PROXIES. Only then is X-Forwarded-For read, from
// the right (the hop our own proxy appended) leftwards past every trusted hop, to the first address no trusted
// proxy vouches for. Anything left of that hop is whatever the client chose to send and is never believed; a
// malformed entry ends the walk at the trusted proxy that passed it on.
import type { Server } from 'bun'
import { nodeNet } from '../runtime/lazy-builtins'

export interface TrustedProxies {
  /** The CIDRs as configured, normalised (`10.0.0.0/8`, `fd00::/8`), for logs and tests. */
  readonly cidrs: readonly string[]
  has(address: string): boolean
}

/** Parses a comma-separated list of CIDRs (or bare addresses); throws Error naming the first bad entry. */
export function parseTrustedProxies(raw: string): TrustedProxies {
  const { BlockList, isIP } = nodeNet()
  const list = new BlockList()
  const cidrs: string[] = []
  for (const part of raw.split(',')) {
    const entry = part.trim()
    if (entry === '') continue
    const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(entry)
    const family = m ? isIP(m[1]!) : 0
    const max = family === 4 ? 32 : 128
    const prefix = m?.[2] === undefined ? max : Number(m[2])
    if (!m || family === 0 || prefix > max) throw new Error(`"${entry}" is not an IPv4 or IPv6 CIDR (examples: 10.0.0.0/8, 192.168.1.7, fd00::/8)`)
    list.addSubnet(m[1]!, prefix, family === 4 ? 'ipv4' : 'ipv6')
    cidrs.push(`${m[1]}/${prefix}`)
  }
  if (cidrs.length === 0) throw new Error('names no CIDR')
  return {
    cidrs,
    // BlockList also matches IPv4-mapped IPv6 addresses (::ffff:10.0.0.1, what a dual-stack socket reports) to IPv4 ranges.
    has: (address) => {
      const family = isIP(address)
      return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6')
    },
  }
}

/** An X-Forwarded-For entry as an address: `[::1]:443` and `1.2.3.4:80` lose their port; '' when not an address. */
function hopAddress(raw: string): string {
  let s = raw.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s)
  if (bracketed) s = bracketed[1]!
  else if (/^[\d.]+:\d+$/.test(s)) s = s.slice(0, s.lastIndexOf(':'))
  return nodeNet().isIP(s) === 0 ? '' : s
}

/** The client address of `peer` (the TCP peer) given the request's X-Forwarded-For header. */
export function clientAddress(peer: string, forwardedFor: string | null, trusted: TrustedProxies | undefined): string {
  if (!trusted || forwardedFor === null || !trusted.has(peer)) return peer
  const hops = forwardedFor.split(',')
  let client = peer
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i]!)
    if (hop === '') return client
    client = hop
    if (!trusted.has(hop)) return hop
  }
  return client
}

/**
 * The function every part of the app asks for a request's client address; '' when there is no peer (requests
 * handled in-process, without a listening server).
 */
export function clientAddressOf(trusted: TrustedProxies | undefined) {
  return (server: Server<unknown> | null | undefined, request: Request): string => {
    const peer = server?.requestIP(request)?.address ?? ''
    return trusted ? clientAddress(peer, request.headers.get('x-forwarded-for'), trusted) : peer
  }
}

/**
 * Whether a request came straight from one of the trusted reverse proxies: then, and only then, are the headers
 * such a proxy sets (X-Forwarded-Host, X-Forwarded-Proto) believed. False without a peer (requests handled in-process).
 */
export function fromTrustedProxyOf(trusted: TrustedProxies | undefined) {
  return (server: Server<unknown> | null | undefined, request: Request): boolean => {
    if (!trusted) return false
    const peer = server?.requestIP(request)?.address
    return peer !== undefined && trusted.has(peer)
  }
}
