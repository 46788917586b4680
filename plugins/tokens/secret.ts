// Token secrets: 32 random bytes, URL-safe base64, shown once; only their SHA-256 is stored (a fast hash
// is right for secrets of this entropy, and lets a request find its token by the hash).
import { createHash, timingSafeEqual } from 'node:crypto'

export function newSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url')
}

/** Constant-time equality of two hashes. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
