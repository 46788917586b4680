// One way for a view to run a change against the API: busy while it runs, the API's refusal shown in its own
// words, a short note once it is done; the caller reloads what the change touched.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { ErrorNote } from './error'

export interface Action {
  busy: boolean
  /** Runs `work`; true when it succeeded (its note then shows), false when it was refused (its error shows). */
  run: (work: () => Promise<unknown>, done?: string) => Promise<boolean>
  clear: () => void
  /** The note or the refusal of the latest run. */
  Feedback: () => JSX.Element | null
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const [note, setNote] = useState<string>()
  async function run(work: () => Promise<unknown>, done?: string): Promise<boolean> {
    setBusy(true)
    setError(undefined)
    setNote(undefined)
    try {
      await work()
      setNote(done)
      return true
    } catch (e) {
      setError(e)
      return false
    } finally {
      setBusy(false)
    }
  }
  function Feedback() {
    if (error !== undefined) return <ErrorNote error={error} />
    if (note)
      return (
        <p role="status" class="note">
          {note}
        </p>
      )
    return null
  }
  return { busy, run, clear: () => (setError(undefined), setNote(undefined)), Feedback }
}

/**
 * The end of an item's form: its submit button (off while the action runs), Cancel (closes the form, nothing saved),
 * and the action's feedback, the API's refusal in its own words.
 */
export function FormEnd({ action, onCancel, submit = 'Save' }: { action: Action; onCancel: () => void; submit?: string }) {
  return (
    <>
      <div class="row">
        <button type="submit" disabled={action.busy}>
          {submit}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <action.Feedback />
    </>
  )
}
