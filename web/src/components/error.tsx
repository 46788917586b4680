// How a failed request shows: the API's own words in an alert region a screen reader announces.
import { ApiError } from '../api'

export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message
  if (error instanceof Error) return error.message
  return String(error)
}

export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null
  return (
    <p class="error" role="alert">
      {messageOf(error)}
    </p>
  )
}
