// API tokens (`/tokens`): the caller's tokens; a new one is made with a name, a description, the permissions the
// API lists (singly, grouped by category) and an optional expiry. Its secret is in the create answer only: it is
// shown once, with a copy button, until dismissed, and is never kept anywhere else by the console.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import { ErrorNote } from '../components/error'
import { DataTable } from '../components/table'
import { LoadView, when } from '../components/view'

interface Token {
  id: string
  name: string
  description: string
  createdAt: string
  expiresAt: string
  capabilities: string[]
}

interface Capability {
  Name: string
  Desc: string
  Category: string
}

export function TokensPage() {
  const tokens = useLoad(() => api.get<Token[]>('/api/tokens'), [])
  const [secret, setSecret] = useState<{ name: string; token: string }>()
  const action = useAction()
  return (
    <section aria-labelledby="tokens-title">
      <h1 id="tokens-title">API tokens</h1>
      {secret && <Secret {...secret} onDone={() => setSecret(undefined)} />}
      <action.Feedback />
      <LoadView loaded={tokens} empty="No tokens yet.">
        {(list) => (
          <DataTable
            caption="API tokens"
            rows={list}
            rowKey={(t) => t.id}
            columns={[
              { title: 'Name', cell: (t) => t.name },
              { title: 'Description', cell: (t) => t.description },
              { title: 'Permissions', cell: (t) => t.capabilities.join(', ') },
              { title: 'Created', cell: (t) => when(t.createdAt) },
              { title: 'Expires', cell: (t) => when(t.expiresAt) },
              {
                title: 'Actions',
                cell: (t) => (
                  <ConfirmButton
                    label="Delete"
                    question={`Delete token ${t.name}?`}
                    onConfirm={async () => {
                      await action.run(() => api.delete(path`/api/tokens/${t.id}`), `Token ${t.name} deleted.`)
                      tokens.reload()
                    }}
                  />
                ),
              },
            ]}
          />
        )}
      </LoadView>
      <CreateToken
        onCreated={(name, token) => {
          setSecret({ name, token })
          tokens.reload()
        }}
      />
    </section>
  )
}

/** The secret of a token just made: the only time it can be seen. */
function Secret({ name, token, onDone }: { name: string; token: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string>()
  async function copy() {
    try {
      await navigator.clipboard.writeText(token)
      setCopied('Copied.')
    } catch {
      setCopied('The browser refused the clipboard: select the secret and copy it by hand.')
    }
  }
  return (
    <div class="secret" role="region" aria-label="New token secret">
      <p>
        The secret of <strong>{name}</strong>. It is shown this once: copy it now.
      </p>
      <div class="row">
        <code class="token" data-testid="token-secret">
          {token}
        </code>
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
      {copied && <p role="status">{copied}</p>}
    </div>
  )
}

function CreateToken({ onCreated }: { onCreated: (name: string, token: string) => void }) {
  const capabilities = useLoad(() => api.get<Capability[]>('/api/info/capabilities'), [])
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [expires, setExpires] = useState('')
  const [chosen, setChosen] = useState<string[]>([])
  const action = useAction()

  async function submit(event: Event) {
    event.preventDefault()
    let made: { token: string } | undefined
    const ok = await action.run(async () => {
      made = await api.post<{ token: string }>('/api/tokens', {
        name,
        description,
        capabilities: chosen,
        // datetime-local is the browser's local time; the API takes RFC 3339
        expiresAt: expires ? new Date(expires).toISOString() : null,
      })
    })
    if (ok && made) {
      onCreated(name, made.token)
      setName('')
      setDescription('')
      setExpires('')
      setChosen([])
    }
  }

  const byCategory = new Map<string, Capability[]>()
  for (const c of capabilities.value ?? []) byCategory.set(c.Category, [...(byCategory.get(c.Category) ?? []), c])

  return (
    <form class="stack wide" onSubmit={submit} aria-labelledby="new-token-title">
      <h2 id="new-token-title">New token</h2>
      <label>
        Name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Expires (empty: never)
        <input type="datetime-local" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
      </label>
      <ErrorNote error={capabilities.error} />
      {capabilities.loading && !capabilities.value && <p role="status">Loading permissions…</p>}
      <div class="categories">
        {[...byCategory].map(([category, caps]) => (
          <fieldset key={category} class="groups">
            <legend>{category}</legend>
            {caps.map((c) => (
              <label key={c.Name} class="check" title={c.Desc}>
                <input
                  type="checkbox"
                  checked={chosen.includes(c.Name)}
                  onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, c.Name] : chosen.filter((x) => x !== c.Name))}
                />
                {c.Name}
              </label>
            ))}
          </fieldset>
        ))}
      </div>
      <button type="submit" disabled={action.busy}>
        Create token
      </button>
      <action.Feedback />
    </form>
  )
}
