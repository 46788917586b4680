// The signed-in person: the JWT from POST /api/login, kept in localStorage so a reload stays signed in, and mirrored
// into the `token` cookie that the API accepts for downloads (the browser then fetches a download by its URL). The
// cookie is SameSite=Strict and scoped to /api; the API refuses a state-changing request made with it from another
// origin.
import { signal } from '@preact/signals'

const KEY = 'quarry.jwt'

export interface Me {
  UID: number
  User: string
  Name: string
  Email: string
  Admin: boolean
  Groups?: { GID: number; Name: string }[]
}

function readStored(): string | null {
  try {
    return localStorage.getItem(KEY)
  } catch {
    return null
  }
}

function setCookie(jwt: string | null): void {
  const secure = location.protocol === 'https:' ? '; Secure' : ''
  document.cookie = jwt
    ? `token=${encodeURIComponent(jwt)}; Path=/api; SameSite=Strict${secure}`
    : `token=; Path=/api; SameSite=Strict; Max-Age=0${secure}`
}

const jwtSignal = signal<string | null>(readStored())
/** The caller's details (GET /api/info/whoami), loaded by the shell once signed in. */
export const me = signal<Me | null>(null)

export const session = {
  jwt: (): string | null => jwtSignal.value,
  signal: jwtSignal,
  start(jwt: string): void {
    try {
      localStorage.setItem(KEY, jwt)
    } catch {
      // storage refused (private mode): the session lasts until the tab closes
    }
    setCookie(jwt)
    jwtSignal.value = jwt
  },
  end(): void {
    try {
      localStorage.removeItem(KEY)
    } catch {
      // nothing stored
    }
    setCookie(null)
    me.value = null
    jwtSignal.value = null
  },
}

if (jwtSignal.value) setCookie(jwtSignal.value)
