// A page of one kind of item (files, resources, saved queries, groups, users): its heading, a button that opens the
// form for a new item, the form (for a new item or the one being edited), the API's word on the latest action, and
// the list with its loading, empty and error states. A form that saved reloads the list.
import type { ComponentChildren, JSX } from 'preact'
import { useState } from 'preact/hooks'
import type { Action } from './action'
import type { Loaded } from './async'
import { DataTable, type Column } from './table'
import { LoadView } from './view'

export interface ItemsPageProps<T> {
  /** The heading's id is `${id}-title`. */
  id: string
  title: string
  /** The button that opens the form for a new item. */
  newLabel: string
  loaded: Loaded<T[]>
  /** What the list says when there is nothing. */
  empty: string
  caption: string
  rowKey: (item: T) => string | number
  /** The page's own action, whose feedback shows under the button. */
  action: Action
  /** The list's columns; `edit` opens the form on an item. */
  columns: (edit: (item: T) => void) => Column<T>[]
  /** The form for a new item (undefined) or the one being edited; `done(true)` after a save. */
  form: (item: T | undefined, done: (saved: boolean) => void) => JSX.Element
  /** Shown above the feedback (a token's secret, say). */
  children?: ComponentChildren
}

export function ItemsPage<T>(props: ItemsPageProps<T>) {
  const { id, loaded, rowKey } = props
  const [editing, setEditing] = useState<{ item: T | undefined }>()
  const done = (saved: boolean) => {
    setEditing(undefined)
    if (saved) loaded.reload()
  }
  return (
    <section aria-labelledby={`${id}-title`}>
      <h1 id={`${id}-title`}>{props.title}</h1>
      <div class="row">
        <button type="button" onClick={() => setEditing({ item: undefined })}>
          {props.newLabel}
        </button>
      </div>
      {props.children}
      <props.action.Feedback />
      {editing && <div key={editing.item === undefined ? 'new' : rowKey(editing.item)}>{props.form(editing.item, done)}</div>}
      <LoadView loaded={loaded} empty={props.empty}>
        {(list) => <DataTable caption={props.caption} rows={list} rowKey={rowKey} columns={props.columns((item) => setEditing({ item }))} />}
      </LoadView>
    </section>
  )
}
