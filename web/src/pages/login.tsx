// The sign-in form: POST /api/login, then the session starts with the JWT it answers.
import { useState } from 'preact/hooks'
import { api } from '../api'
import { ErrorNote } from '../components/error'
import { session } from '../session'

interface LoginAnswer {
  LoginStatus: boolean
  JWT?: string
  Reason?: string
}

export function LoginPage() {
  const [user, setUser] = useState('')
  const [pass, setPass] = useState('')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)

  async function submit(event: Event) {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const answer = await api.post<LoginAnswer>('/api/login', { User: user, Pass: pass })
      if (answer.LoginStatus && answer.JWT) session.start(answer.JWT)
      else setError(new Error(answer.Reason || 'the login was refused'))
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  return (
    <main class="login">
      <h1>Quarry</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <label>
          User name
          <input name="user" autoComplete="username" required value={user} onInput={(e) => setUser(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required value={pass} onInput={(e) => setPass(e.currentTarget.value)} />
        </label>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  )
}
