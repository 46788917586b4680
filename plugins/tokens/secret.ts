// Token secrets: 32 random bytes, URL-safe base64, shown once; only their SHA-256 is stored (a fast hash
// is right for secrets of this entropy, and lets a request find its token by the hash).

export function newSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

export function hashSecret(secret: string): string {
  return Bun.SHA256.hash(secret, 'base64')
}

/** Equality of two hashes in time that depends only on their length, not on where they differ. */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}
