// Retention and deletion of ingested entries, for admins (server/search/retention.ts; docs/api.md "Retention and
// deletion"): the retention rules (read, and replaced as a whole), and the deletion of a tag's entries in a time range,
// answered once it is done with how many entries went.
import { Elysia, t } from 'elysia'
import { Errors } from '../../server/http/errors'
import { area, refusals } from '../../server/http/openapi'
import { TAG_NAME } from '../../engine/parse'
import { parseTime } from '../../server/runtime/time'
import { type DataRemoval, DeletionBusy } from '../../server/search/retention'
import type { DeletionRecord, RetentionRule } from '../../server/search/retention-repo'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'

/** Stored rules at most (one per tag, within QUARRY_MAX_TAGS in practice). */
export const MAX_RETENTION_RULES = 10_000
/** When the deletion lease is held by another replica, retry after this long. */
const DELETION_RETRY_S = 5

const Limit = t.Union([t.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), t.Null()])
const Rule = t.Object({
  Tag: t.String({ maxLength: 128, description: "The tag; '' for the store-wide rule (an age only)." }),
  MaxAgeMs: Limit,
  MaxBytes: Limit,
})
const RetentionState = t.Object({
  /** The rules of the variables (QUARRY_RETENTION, QUARRY_RETENTION_TAGS, QUARRY_RETENTION_SIZES). */
  Variables: t.Array(Rule),
  /** The rules the API stored: where one sets a field, it wins over the variable. */
  Stored: t.Array(Rule),
  /** What applies, per tag named by a rule, and store-wide ('') for every other tag. */
  Effective: t.Array(Rule),
  IntervalMs: t.Integer(),
})
const Deletion = t.Object({
  ID: t.Integer(),
  Tag: t.String(),
  Start: t.String(),
  End: t.String(),
  Created: t.String(),
  Finished: t.Union([t.String(), t.Null()]),
  Deleted: t.Integer(),
})

export interface AdminDataDeps {
  auth: AuthService
  removal: DataRemoval
  intervalMs: number
}

function toRule(r: RetentionRule) {
  return { Tag: r.tag, MaxAgeMs: r.maxAgeMs, MaxBytes: r.maxBytes }
}

function toDeletion(d: DeletionRecord) {
  return {
    ID: d.id,
    Tag: d.tag,
    Start: new Date(d.start).toISOString(),
    End: new Date(d.end).toISOString(),
    Created: new Date(d.created).toISOString(),
    Finished: d.finished === null ? null : new Date(d.finished).toISOString(),
    Deleted: d.deleted,
  }
}

export function adminDataPlugin({ auth, removal, intervalMs }: AdminDataDeps) {
  const state = async () => {
    const { variables, stored, effective } = await removal.rules()
    const applied: RetentionRule[] = [{ tag: '', maxAgeMs: effective.maxAgeMs ?? 0, maxBytes: null }]
    for (const [tag, r] of [...effective.tags].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      applied.push({ tag, maxAgeMs: r.maxAgeMs ?? effective.maxAgeMs ?? 0, maxBytes: r.maxBytes ?? 0 })
    return { Variables: variables.map(toRule), Stored: stored.map(toRule), Effective: applied.map(toRule), IntervalMs: intervalMs }
  }
  return new Elysia({ name: 'quarry-admin-data', detail: area('Retention and deletion') })
    .use(authGuard(auth))
    .get('/api/admin/retention', state, {
      access: 'admin',
      response: RetentionState,
      detail: {
        summary: 'Read the retention rules',
        description:
          "The rules of the variables, those stored through this API, and what applies (Effective: a MaxAgeMs or MaxBytes of 0 is no limit; tag '' is the store-wide age, which applies to every tag without an age of its own).",
      },
    })
    .put(
      '/api/admin/retention',
      async ({ body }) => {
        const seen = new Set<string>()
        const rules: RetentionRule[] = body.Rules.map((r, i) => {
          if (r.Tag !== '' && !TAG_NAME.test(r.Tag)) throw Errors.badRequest(`rule ${i}: Tag must be '' or 1 to 128 letters, digits, '.', '_' or '-'`)
          if (r.Tag === '' && r.MaxBytes !== null) throw Errors.badRequest(`rule ${i}: the store-wide rule (Tag '') has no MaxBytes: sizes are per tag`)
          if (seen.has(r.Tag)) throw Errors.badRequest(`rule ${i}: tag '${r.Tag}' has a rule already`)
          seen.add(r.Tag)
          return { tag: r.Tag, maxAgeMs: r.MaxAgeMs, maxBytes: r.MaxBytes }
        })
        await removal.setRules(rules)
        return state()
      },
      {
        access: 'admin',
        body: t.Object({ Rules: t.Array(Rule, { maxItems: MAX_RETENTION_RULES }) }),
        // Elysia coerces a string where a list of objects is declared ("" became [], which replaced every stored rule:
        // found by the generated bad-input test), so the body is checked as sent, before validation.
        transform(ctx) {
          const rules = (ctx.body as { Rules?: unknown } | null | undefined)?.Rules
          if (!Array.isArray(rules)) throw Errors.badRequest('invalid body property Rules: expected a list of rules ([] for none)')
        },
        response: RetentionState,
        detail: {
          summary: 'Replace the stored retention rules',
          description:
            "Replaces every stored rule (the store keeps them, so every replica applies them). A field set here wins over the variable's (0: no limit, also against a variable); null leaves the variable's. They apply from the next retention sweep.",
        },
      },
    )
    .post(
      '/api/admin/entries/delete',
      async ({ body, caller, set }) => {
        if (!TAG_NAME.test(body.Tag)) throw Errors.badRequest("Tag must be 1 to 128 letters, digits, '.', '_' or '-'")
        const start = parseTime(body.Start)
        const end = parseTime(body.End)
        if (start === undefined || body.Start === '') throw Errors.badRequest('Start is not an RFC 3339 time')
        if (end === undefined || body.End === '') throw Errors.badRequest('End is not an RFC 3339 time')
        if (start >= end) throw Errors.badRequest('Start must be before End')
        try {
          return toDeletion(await removal.deleteEntries(body.Tag, start, end, caller.uid))
        } catch (e) {
          if (e instanceof DeletionBusy) {
            set.headers['retry-after'] = String(DELETION_RETRY_S)
            throw Errors.serviceUnavailable(`${e.message}; try again later`)
          }
          throw e
        }
      },
      {
        access: 'admin',
        body: t.Object({ Tag: t.String({ maxLength: 128 }), Start: t.String({ maxLength: 64 }), End: t.String({ maxLength: 64 }) }),
        response: { 200: Deletion, ...refusals(503) },
        detail: {
          summary: "Delete a tag's entries in a time range",
          description:
            'Deletes now every entry of Tag with a time in [Start, End) (RFC 3339), rewriting the segments the range cuts through, and answers once it is done with the number of entries deleted. Crash-safe: a deletion cut off is finished after the restart. One deletion at a time in a cluster: 503 with Retry-After while another runs.',
        },
      },
    )
    .get('/api/admin/entries/deletions', async () => (await removal.deletions()).map(toDeletion), {
      access: 'admin',
      response: t.Array(Deletion),
      detail: { summary: 'List the deletions', description: 'The unfinished deletions (oldest first), then the latest finished ones (newest first).' },
    })
}
