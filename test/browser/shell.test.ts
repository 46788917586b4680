// The console's shell: served at / under its CSP, sign-in and sign-out, the account page, errors in the API's
// words, both window sizes, keyboard use and accessibility.
import { describe, expect, test } from 'bun:test'
import { describeWithServers } from '../services'
import { ADMIN_PASSWORD } from '../helpers'
import { accessibilityViolations, BROWSER_TEST_MS, consoleWorld, expectClean, screenshot } from './harness'

describeWithServers('web console shell', () => {
  const world = consoleWorld()

  test('/ is the console under a strict CSP; its files are hashed and cached for good', async () => {
    const page = await fetch(`${world.url}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const csp = page.headers.get('content-security-policy')!
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).not.toContain('unsafe-eval')
    const html = await page.text()
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/) // no inline script
    const assets = [...html.matchAll(/\/assets\/(main-[a-z0-9]+\.(?:js|css))/g)].map((m) => m[1]!)
    expect(assets.length).toBe(2)
    for (const name of assets) {
      const r = await fetch(`${world.url}/assets/${name}`)
      expect(r.status).toBe(200)
      expect(r.headers.get('cache-control')).toContain('immutable')
    }
    const missing = await fetch(`${world.url}/assets/..%2Fpackage.json`)
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ Error: 'no such file of the console' })
  })

  test('signing in shows the search page, then the account; a wrong password shows the API\'s reason; signing out returns to the form', async () => {
    const opened = await world.open()
    const { page } = opened
    await page.goto(world.url)
    await page.getByLabel('User name').fill('admin')
    await page.getByLabel('Password').fill('wrong-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toBeTruthy()
    const reason = (await page.getByRole('alert').textContent())!
    // the alert shows the server's own Reason for the refusal
    const answer = (await (
      await fetch(`${world.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: 'wrong-password' }) })
    ).json()) as { Reason: string }
    expect(reason).toBe(answer.Reason)

    await page.getByLabel('Password').fill(ADMIN_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    // the start page is the search page; the navigation leads to the account, and marks only its own link
    await page.getByRole('heading', { name: 'Search', exact: true }).waitFor()
    await page.getByRole('link', { name: 'Account' }).click()
    await page.getByRole('heading', { name: 'Account' }).waitFor()
    expect(await page.locator('nav a[aria-current="page"]').allInnerTexts()).toEqual(['Account'])
    expect(await page.locator('dl.facts').innerText()).toContain('admin@localhost')
    await screenshot(page, 'account')
    // a reload keeps the session
    await page.reload()
    await page.getByRole('heading', { name: 'Account' }).waitFor()
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await page.evaluate(() => localStorage.length)).toBe(0)
    expectClean(opened, [422])
  }, BROWSER_TEST_MS)

  test('a revoked session falls back to the sign-in form', async () => {
    const opened = await world.signedIn()
    await world.api('DELETE', '/api/logout') // every session of the admin ends
    await opened.page.reload()
    await opened.page.getByRole('button', { name: 'Sign in' }).waitFor()
    expectClean(opened, [401]) // the stale JWT's refusal, expected
  }, BROWSER_TEST_MS)

  test('a phone-sized window: the navigation folds into a menu, usable by keyboard', async () => {
    const opened = await world.signedIn(undefined, undefined, { width: 390, height: 800 })
    const { page } = opened
    const menu = page.getByRole('button', { name: 'Menu' })
    await expect(menu.isVisible()).resolves.toBe(true)
    await expect(page.getByRole('navigation', { name: 'Main' }).isVisible()).resolves.toBe(false)
    await menu.focus()
    await page.keyboard.press('Enter')
    await page.getByRole('link', { name: 'Account' }).waitFor({ state: 'visible' })
    await screenshot(page, 'account-phone')
    expectClean(opened)
  }, BROWSER_TEST_MS)

  test('the theme follows the system: light and dark, and axe finds no serious violation in either', async () => {
    const colors = async (scheme: 'light' | 'dark') => {
      const opened = await world.open(undefined, scheme)
      await opened.page.goto(world.url)
      await opened.page.getByRole('button', { name: 'Sign in' }).waitFor()
      const body = await opened.page.evaluate('(() => { const s = getComputedStyle(document.body); return { background: s.backgroundColor, color: s.color } })()')
      expect(await accessibilityViolations(opened.page)).toEqual([])
      expectClean(opened)
      return body
    }
    // the style sheet's --bg and --fg of each theme
    expect(await colors('light')).toEqual({ background: 'rgb(255, 255, 255)', color: 'rgb(27, 31, 36)' })
    expect(await colors('dark')).toEqual({ background: 'rgb(15, 20, 25)', color: 'rgb(230, 237, 243)' })
  }, BROWSER_TEST_MS)

  test('no serious accessibility violation on the sign-in form and the account page', async () => {
    const opened = await world.open()
    await opened.page.goto(world.url)
    await opened.page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await accessibilityViolations(opened.page)).toEqual([])
    const signed = await world.signedIn()
    await signed.page.getByRole('link', { name: 'Account' }).click()
    await signed.page.getByRole('heading', { name: 'Account' }).waitFor()
    expect(await accessibilityViolations(signed.page)).toEqual([])
    expectClean(signed)
  }, BROWSER_TEST_MS)
})

describe('web console, not built', () => {
  test('the plugin answers 503 with the way to build it', async () => {
    const { consolePlugin } = await import('../../plugins/console')
    const app = consolePlugin({ page: undefined, assets: new Map() })
    const r = await app.handle(new Request('http://localhost/'))
    expect(r.status).toBe(503)
    expect(await r.json()).toEqual({ Error: 'the web console is not built: run `npm run build:web`' })
  })
})
