// The signed-in person's own account: who they are, their groups, their password, and signing out everywhere.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { ErrorNote } from '../components/error'
import { me, session } from '../session'

export function AccountPage() {
  const who = me.value
  const [orig, setOrig] = useState('')
  const [next, setNext] = useState('')
  const [note, setNote] = useState<string>()
  const [error, setError] = useState<unknown>()
  if (!who) return null

  async function changePassword(event: Event) {
    event.preventDefault()
    setNote(undefined)
    setError(undefined)
    try {
      await api.put(path`/api/users/${who!.UID}/pwd`, { OrigPass: orig, NewPass: next })
      setOrig('')
      setNext('')
      setNote('Password changed.')
    } catch (e) {
      setError(e)
    }
  }

  async function signOutEverywhere() {
    try {
      await api.delete('/api/logout')
    } catch (e) {
      setError(e)
      return
    }
    session.end()
  }

  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Account</h1>
      <dl class="facts">
        <dt>User name</dt>
        <dd>{who.User}</dd>
        <dt>Name</dt>
        <dd>{who.Name}</dd>
        <dt>Email</dt>
        <dd>{who.Email}</dd>
        <dt>Administrator</dt>
        <dd>{who.Admin ? 'yes' : 'no'}</dd>
        <dt>Groups</dt>
        <dd>{who.Groups?.length ? who.Groups.map((g) => g.Name).join(', ') : 'none'}</dd>
      </dl>
      <form onSubmit={changePassword} aria-label="Change password" class="stack">
        <h2>Change password</h2>
        <label>
          Current password
          <input type="password" autoComplete="current-password" required value={orig} onInput={(e) => setOrig(e.currentTarget.value)} />
        </label>
        <label>
          New password
          <input type="password" autoComplete="new-password" required value={next} onInput={(e) => setNext(e.currentTarget.value)} />
        </label>
        <button type="submit">Change password</button>
      </form>
      {note && <p role="status">{note}</p>}
      <ErrorNote error={error} />
      <h2>Sessions</h2>
      <button type="button" onClick={signOutEverywhere}>
        Sign out everywhere
      </button>
    </section>
  )
}
