// Loads something for a view: its value, its error (shown, never a blank screen) and a way to load it again.
import { useCallback, useEffect, useState } from 'preact/hooks'

export interface Loaded<T> {
  value: T | undefined
  error: unknown
  loading: boolean
  reload: () => void
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ value: T | undefined; error: unknown; loading: boolean }>({ value: undefined, error: undefined, loading: true })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let live = true
    setState((s) => ({ ...s, loading: true }))
    load().then(
      (value) => live && setState({ value, error: undefined, loading: false }),
      (error: unknown) => live && setState({ value: undefined, error, loading: false }),
    )
    return () => {
      live = false
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, round])
  const reload = useCallback(() => setRound((r) => r + 1), [])
  return { ...state, reload }
}
