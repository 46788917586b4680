// The shell: the login form until a session exists, then the navigation (from pages/index.ts) and the page the
// route names. The caller's details are loaded once per session; a failure shows the API's words with a retry.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api'
import { ErrorNote } from './components/error'
import { HOME, PAGES } from './pages'
import { LoginPage } from './pages/login'
import { href, match, navigate, route } from './router'
import { me, session, type Me } from './session'

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        Nothing here. <a href={href(HOME)}>Go to the start page</a>.
      </p>
    </section>
  )
}

export function App() {
  const jwt = session.signal.value
  const who = me.value
  const [error, setError] = useState<unknown>()
  const [round, setRound] = useState(0)
  const [menuOpen, setMenuOpen] = useState(false)

  useEffect(() => {
    if (!jwt) return
    setError(undefined)
    api.get<Me>('/api/info/whoami').then(
      (m) => (me.value = m),
      (e: unknown) => setError(e),
    )
  }, [jwt, round])

  if (!jwt) return <LoginPage />
  if (!who)
    return (
      <main class="loading">
        {error ? (
          <>
            <ErrorNote error={error} />
            <button type="button" onClick={() => setRound((r) => r + 1)}>
              Try again
            </button>
          </>
        ) : (
          <p role="status">Loading…</p>
        )}
      </main>
    )

  const current = route.value
  if (current.path === '/') {
    navigate(HOME)
    return null
  }
  const pages = PAGES.filter((p) => !p.admin || who.Admin)
  let shown = <NotFound />
  for (const page of pages) {
    const params = match(page.pattern, current.path)
    if (params) {
      const Component = page.component
      shown = <Component params={params} query={current.query} />
      break
    }
  }

  async function signOut() {
    try {
      await api.put('/api/logout')
    } finally {
      session.end()
    }
  }

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="bar">
        <span class="brand">Quarry</span>
        <button type="button" class="menu" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Main">
          {pages
            .filter((p) => p.nav)
            .map((p) => (
              <a key={p.pattern} href={href(p.pattern)} aria-current={current.path === p.pattern || current.path.startsWith(`${p.pattern}/`) ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
                {p.title}
              </a>
            ))}
        </nav>
        <span class="who">{who.User}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {shown}
      </main>
    </>
  )
}
