// The console's browser tests: a real server process (server/main.ts, serving web/dist) and Debian's Chromium
// driven by playwright-core (installed by test/chromium-install.sh). Every page a test opens records console
// errors, uncaught exceptions and CSP violations; `expectClean` fails the test on any. Screenshots go to
// test/browser/artifacts/ (not committed).
import { afterAll, beforeAll, expect } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { ADMIN_PASSWORD, listening, spawnServer } from '../helpers'

export const ARTIFACTS = join(import.meta.dir, 'artifacts')
/** Each step of a browser test waits at most this long for what it expects (the machine may be loaded). */
export const STEP_MS = 20_000
export const BROWSER_TEST_MS = 120_000

/** The flags the machine's closed network needs (no background connections, no first-run, no sync). */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage']

function chromiumPath(): string {
  const r = Bun.spawnSync(['bash', join(import.meta.dir, '..', 'chromium-install.sh')], { stdout: 'pipe', stderr: 'inherit' })
  if (r.exitCode !== 0) throw new Error('test/chromium-install.sh could not provide Chromium (see above)')
  return r.stdout.toString().trim()
}

export interface ConsolePage {
  page: Page
  /** Console errors, page errors and CSP violations seen so far. */
  problems: string[]
}

export interface ConsoleWorld {
  url: string
  browser: Browser
  /** A new page (its own context: no shared storage) at `viewport` in the system theme `colorScheme`, recording problems. */
  open(viewport?: { width: number; height: number }, colorScheme?: 'light' | 'dark'): Promise<ConsolePage>
  /** A new page signed in as `user` (the admin by default), showing the start page. */
  signedIn(user?: string, password?: string, viewport?: { width: number; height: number }): Promise<ConsolePage>
  /** The API as `user` would call it (for setting up what a test then looks at). */
  api(method: string, path: string, body?: unknown, user?: string, password?: string): Promise<unknown>
}

/** One server and one browser for a test file, started before its tests and stopped after. */
export function consoleWorld(env: Record<string, string> = {}): ConsoleWorld {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-browser-'))
  let server: ReturnType<typeof spawnServer> | undefined
  const jwts = new Map<string, string>()
  const world = {
    url: '',
    browser: undefined as unknown as Browser,
    async open(viewport = { width: 1280, height: 800 }, colorScheme: 'light' | 'dark' = 'light'): Promise<ConsolePage> {
      const context = await world.browser.newContext({ viewport, colorScheme })
      const page = await context.newPage()
      page.setDefaultTimeout(STEP_MS)
      const problems: string[] = []
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`)
      })
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
      // CSP violations reach the page as events before (or without) a console message
      await page.addInitScript({
        content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI))",
      })
      return { page, problems }
    },
    async signedIn(user = 'admin', password = ADMIN_PASSWORD, viewport?: { width: number; height: number }): Promise<ConsolePage> {
      const opened = await world.open(viewport)
      await opened.page.goto(world.url)
      await opened.page.getByLabel('User name').fill(user)
      await opened.page.getByLabel('Password').fill(password)
      await opened.page.getByRole('button', { name: 'Sign in' }).click()
      await opened.page.getByRole('button', { name: 'Sign out', exact: true }).waitFor()
      return opened
    },
    async api(method: string, path: string, body?: unknown, user = 'admin', password = ADMIN_PASSWORD): Promise<unknown> {
      let jwt = jwts.get(user)
      if (!jwt) {
        const r = await fetch(`${world.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: user, Pass: password }) })
        jwt = ((await r.json()) as { JWT: string }).JWT
        jwts.set(user, jwt)
      }
      const r = await fetch(`${world.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${jwt}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await r.text()
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`)
      return text ? JSON.parse(text) : null
    },
  }
  beforeAll(async () => {
    server = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD, ...env })
    world.url = (await listening(server)).url
    world.browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS })
  }, 60_000)
  afterAll(async () => {
    await world.browser?.close()
    server?.kill()
    await server?.exited
    rmSync(dataDir, { recursive: true, force: true })
  })
  return world
}

/**
 * No console error, page error or CSP violation was seen on the page. Chromium logs every failed request as a
 * console error: the refusals a test provokes on purpose are named by their status in `refusals` and left out.
 */
export function expectClean(opened: ConsolePage, refusals: number[] = []): void {
  const expected = new Set(refusals.map((status) => `console: Failed to load resource: the server responded with a status of ${status} `))
  expect(opened.problems.filter((p) => ![...expected].some((e) => p.startsWith(e)))).toEqual([])
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page as it is now (ids and the elements concerned). */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // through the debugger protocol: an inline script element would be refused by the console's CSP (and reported)
  await page.evaluate(AXE_SOURCE)
  const results = (await page.evaluate(() => (globalThis as unknown as { axe: { run: () => Promise<unknown> } }).axe.run())) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[]
  }
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

/** Polls `probe` until it returns something other than undefined (the server and the page work on their own), STEP_MS at most. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + STEP_MS
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}
