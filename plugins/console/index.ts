// The web console (web/, built into web/dist by `npm run build:web`): its page at `/` and its two hashed files
// under `/assets/`, public like the login form (every datum the page shows comes from the API, under the caller's
// own rights). The page runs under CONSOLE_CSP: scripts and styles from this origin only, no inline script or
// style element, no eval, requests to this origin only; it renders user content as text (Preact escapes it), never
// as markup.
import { Elysia } from 'elysia'
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * The console's policy. `style-src 'self'` admits the one style sheet; styles a script sets through the CSSOM
 * (Preact's `style` prop, ECharts' layout) are not style elements or attributes and need no 'unsafe-inline'.
 * `img-src data: blob:` for the charts' "save as image" and the page's empty icon.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
/** The hashed files: their names change with their bytes, so a browser may keep them for good. */
const ASSET_CACHE = 'public, max-age=31536000, immutable'
const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', map: 'application/json; charset=utf-8' }

export interface ConsoleFiles {
  /** index.html's text; undefined when the console was not built. */
  page: string | undefined
  /** The assets by file name. */
  assets: Map<string, Blob>
}

/**
 * web/dist, wherever this code runs from: the source tree (plugins/console → ../../web/dist), or the server's
 * bytecode bundle: beside its main.js (`npm run build:server` copies it there as `web/`) or, in the image,
 * /app/web/dist for /app/dist/server/main.js.
 */
function distDirectory(): string | undefined {
  const main = dirname(Bun.main)
  for (const dir of [join(import.meta.dir, '..', '..', 'web', 'dist'), join(main, 'web'), join(main, '..', '..', 'web', 'dist')])
    if (existsSync(join(dir, 'index.html'))) return dir
  return undefined
}

/** The built console: embedded in the single executable (`npm run build`), else read from web/dist. */
export async function loadConsoleFiles(): Promise<ConsoleFiles> {
  const assets = new Map<string, Blob>()
  let page: string | undefined
  // `bun build --compile --asset=web/dist` embeds them as `dist/<name>`
  for (const blob of Bun.embeddedFiles) {
    const name = /(?:^|\/)dist\/(index\.html|main-[a-z0-9]+\.(?:js|css))$/.exec((blob as Blob & { name: string }).name)?.[1]
    if (name === 'index.html') page = await blob.text()
    else if (name) assets.set(name, blob)
  }
  if (page !== undefined) return { page, assets }
  const dir = distDirectory()
  if (!dir) return { page: undefined, assets }
  for (const name of readdirSync(dir)) if (name !== 'index.html') assets.set(name, Bun.file(join(dir, name)))
  return { page: await Bun.file(join(dir, 'index.html')).text(), assets }
}

const NOT_BUILT = JSON.stringify({ Error: 'the web console is not built: run `npm run build:web`' })

export function consolePlugin(files: ConsoleFiles) {
  return new Elysia({ name: 'quarry-console' })
    .get(
      '/',
      ({ set }) => {
        if (files.page === undefined) {
          set.status = 503
          set.headers['content-type'] = 'application/json; charset=utf-8'
          return NOT_BUILT
        }
        set.headers['content-type'] = 'text/html; charset=utf-8'
        set.headers['content-security-policy'] = CONSOLE_CSP
        set.headers['cache-control'] = 'no-cache'
        return files.page
      },
      { detail: { hide: true } },
    )
    .get(
      '/assets/:name',
      ({ params, set, status }) => {
        const asset = files.assets.get(params.name)
        if (!asset) return status(404, { Error: 'no such file of the console' })
        set.headers['content-type'] = TYPES[params.name.slice(params.name.lastIndexOf('.') + 1)] ?? 'application/octet-stream'
        set.headers['cache-control'] = ASSET_CACHE
        return asset
      },
      { detail: { hide: true } },
    )
}
