// Security headers (docs/security.md, "User content never renders in the API's origin"). Every answer of the API
// carries API_HEADERS: it is a JSON API whose answers are never meant to be rendered, framed, cached by shared caches
// or sniffed into another type. Downloads of user content (user files, resource contents, search results) must never
// run in the API's origin, where the browser holds the `token` cookie: they carry DOWNLOAD_HEADERS on top (a sandboxed
// origin, no sniffing) and go out as attachments unless their type is one of the few a browser only ever displays.
import { Elysia } from 'elysia'

/** The API's own answers: no scripts, styles, frames or sub-resources of any kind, and no framing of them. */
const API_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox"

/**
 * On every answer. A fixed object that Elysia copies into each request's headers once (`.headers()`), so the
 * cost per request is one small shallow copy and no hook (measured: about 1 µs per answer, most of it Bun
 * building the headers). Headers that only matter to documents a browser renders (COOP, Permissions-Policy)
 * are left out: no answer of this API is one, which is what the CSP and nosniff ensure.
 */
export const API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'content-security-policy': API_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  // answers hold user data and credentials (login, tokens): no shared or back-button cache may keep them
  'cache-control': 'no-store',
})

/**
 * The API reference page (GET /api/docs, plugins/system/docs.ts adds its script sources): it renders no user
 * content and talks only to this origin; inline styles are the page's own. No sandbox: a sandboxed page has an
 * opaque origin and could not fetch the document from this one.
 */
export const DOCS_CSP_BASE = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * On every answer of a server that serves HTTPS itself (QUARRY_TLS_CERT): browsers then use only HTTPS for this host
 * for a year, so no later plain-HTTP link or typed address can be intercepted. Never on plain HTTP, where a browser
 * ignores it and a proxy in front may serve HTTPS under another policy of its own.
 */
export const HSTS_HEADER: Readonly<Record<string, string>> = Object.freeze({ 'strict-transport-security': 'max-age=31536000' })

export function securityHeadersPlugin(options: { https: boolean }) {
  return new Elysia({ name: 'quarry-security-headers' }).headers({ ...API_HEADERS, ...(options.https ? HSTS_HEADER : {}) })
}

/**
 * User content: a sandboxed, scriptless origin even when opened directly. `style-src 'unsafe-inline'` only lets
 * a browser style its own viewer of an image or text (the same policy GitHub's raw host uses).
 */
export const DOWNLOAD_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox"

/**
 * The types a download may be shown inline as: raster images and plain text, which browsers only ever display.
 * Everything else is an attachment: HTML, XHTML, XML, SVG and JavaScript run scripts; PDF viewers run their
 * own scripts and forms and are not bound by the sandbox everywhere; unknown types (application/octet-stream)
 * may be sniffed by browsers that ignore nosniff. The media type is compared without its parameters.
 */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/x-icon', 'text/plain'])

export function isInlineType(contentType: string): boolean {
  return INLINE_TYPES.has(contentType.split(';')[0]!.trim().toLowerCase())
}

/** The headers of a download of user content of this type (its Content-Disposition included). */
export function downloadHeaders(contentType: string, filename?: string): Record<string, string> {
  return {
    'content-type': contentType,
    'x-content-type-options': 'nosniff',
    'content-security-policy': DOWNLOAD_CSP,
    'content-disposition': contentDisposition(isInlineType(contentType) ? 'inline' : 'attachment', filename),
  }
}

/**
 * A Content-Disposition value. The file name, when given, goes out as an ASCII fallback (characters outside a
 * safe set replaced) and in RFC 6266 `filename*` form, so no quote, CR, LF or `;` of a user's name can end the
 * header or add parameters to it.
 */
export function contentDisposition(kind: 'inline' | 'attachment', filename?: string): string {
  if (!filename) return kind
  filename = filename.toWellFormed()
  const fallback = filename.replace(/[^A-Za-z0-9._ -]/g, '_').slice(0, 128) || 'download'
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`
}
