// GET /api/notifications (decisions §6): an object keyed by notification id. Quarry raises no notifications
// (the spec leaves their content out), so the answer is the empty object.
import { Elysia, t } from 'elysia'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'

export function notificationsPlugin({ auth }: { auth: AuthService }) {
  return new Elysia({ name: 'quarry-notifications' })
    .use(authGuard(auth))
    .get('/api/notifications', () => ({}), {
      access: 'NotificationRead',
      response: t.Record(t.String(), t.Unknown()),
      detail: { summary: 'Notifications of the caller, keyed by id ({} when there are none)' },
    })
}
