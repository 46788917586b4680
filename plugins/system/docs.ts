// The OpenAPI document (GET /api/docs/json) and a page to browse it (GET /api/docs, Scalar, with its script from
// GET /api/docs/scalar-VERSION.js), all public.
// The document is generated once, from the assembled app (ApiDocs.learn), by plugins/system/document.ts, which is
// imported on the first request for it: the generator is not loaded at start (bench/README.md, cold start).
import { Elysia, type AnyElysia } from 'elysia'
import { ScalarRender } from '@elysiajs/openapi/scalar'
import { DOCS_CSP_BASE } from '../../server/http/headers'
import pkg from '../../package.json'
// The vendored Scalar bundle (vendor/scalar/README.md): a file path here, and an embedded file in the single
// executable (`bun build --compile`), so the page works without any CDN or internet access.
import scalarBundle from '../../vendor/scalar/standalone.js' with { type: 'file' }
import { dirname, isAbsolute, join } from 'node:path'

/**
 * The bundle's file: an absolute path from the source tree and in the single executable; in the server's bytecode
 * bundle (`npm run build:server`, which copies it beside main.js) a path relative to main.js (Bun.main).
 */
const SCALAR_FILE = isAbsolute(scalarBundle) ? scalarBundle : join(dirname(Bun.main), scalarBundle)

/** The vendored Scalar bundle's version: in its path, so a browser may keep it for good and an update changes the URL. */
export const SCALAR_VERSION = '1.72.1'

export const DOCS_PATH = '/api/docs'
export const DOCS_JSON_PATH = '/api/docs/json'
/** The Scalar bundle the page loads, served by this server (public, like the page). */
export const SCALAR_PATH = `/api/docs/scalar-${SCALAR_VERSION}.js`
/** Its caching: the path names the version, so the bytes behind it never change. */
export const SCALAR_CACHE = 'public, max-age=31536000, immutable'

/** The document of the assembled app, built on first use and kept (the routes do not change once assembled). */
export class ApiDocs {
  private app: AnyElysia | undefined
  private document: Promise<string> | undefined

  learn(app: AnyElysia): void {
    this.app = app
  }

  json(): Promise<string> {
    const app = this.app
    if (!app) throw new Error('ApiDocs.learn was not run on the assembled app')
    return (this.document ??= import('./document').then(({ buildDocument }) => JSON.stringify(buildDocument(app))))
  }
}

/**
 * Scalar's configuration: the features that need Scalar's cloud or would show on localhost are off, since the page
 * works offline and its CSP admits requests to this origin only: the AI agent ("Ask AI"), the MCP generator
 * ("Generate MCP") and the developer tools ("Share", "Deploy", shown by default on localhost).
 */
export const SCALAR_CONFIGURATION = {
  url: DOCS_JSON_PATH,
  cdn: SCALAR_PATH,
  withDefaultFonts: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  _integration: 'elysiajs',
}

/**
 * Runs before the bundle: the bundle's Zod (v4) probes whether it may compile validators with `Function('')` and,
 * under a script-src without 'unsafe-eval', the browser reports that probe as a CSP violation although Zod catches
 * it. Zod's global configuration (`globalThis.__zod_globalConfig`, read by the bundle when it loads) with
 * `jitless` skips the probe and validates without generated code, so the page needs no 'unsafe-eval'.
 */
const ZOD_JITLESS = '<script>globalThis.__zod_globalConfig = { jitless: true }</script>'

/**
 * The page: Scalar's, with ZOD_JITLESS ahead of the bundle's script element and an empty icon, so that a browser
 * asks for no /favicon.ico (which this API does not serve).
 */
const PAGE = ScalarRender(
  { title: 'Quarry web API', version: pkg.version, description: 'The Quarry web API reference' },
  SCALAR_CONFIGURATION as never,
)
  .replace('<head>', '<head>\n    <link rel="icon" href="data:,">')
  .replace(`<script src="${SCALAR_PATH}"`, `${ZOD_JITLESS}\n    <script src="${SCALAR_PATH}"`)

/**
 * The page's own policy, on its path only: scripts from this origin (the one is the vendored Scalar bundle) and
 * the page's inline script elements (by their hashes: the configuration and ZOD_JITLESS), inline styles, and requests to this origin only (the
 * document, and the "try it" requests). The page holds no user content; every other answer keeps API_CSP.
 */
export const DOCS_CSP = `${DOCS_CSP_BASE}; script-src 'self' ${[...PAGE.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)]
  .map((m) => `'sha256-${new Bun.CryptoHasher('sha256').update(m[1]!).digest('base64')}'`)
  .join(' ')}`

export function docsPlugin(docs: ApiDocs) {
  return new Elysia({ name: 'quarry-docs' })
    .get(
      DOCS_PATH,
      ({ set }) => {
        set.headers['content-type'] = 'text/html; charset=utf-8'
        set.headers['content-security-policy'] = DOCS_CSP
        return PAGE
      },
      { detail: { hide: true } },
    )
    .get(
      SCALAR_PATH,
      ({ set }) => {
        set.headers['content-type'] = 'text/javascript; charset=utf-8'
        set.headers['cache-control'] = SCALAR_CACHE
        return Bun.file(SCALAR_FILE)
      },
      { detail: { hide: true } },
    )
    .get(
      DOCS_JSON_PATH,
      ({ set }) => {
        set.headers['content-type'] = 'application/json; charset=utf-8'
        return docs.json()
      },
      { detail: { hide: true } },
    )
}
