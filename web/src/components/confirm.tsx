// A destructive button that asks first, in place: the first press shows the question with a confirming button
// (focused, so Enter confirms) and Cancel; nothing is sent until the second press.
import { useEffect, useRef, useState } from 'preact/hooks'

export function ConfirmButton({ label, question, confirm = label, onConfirm, disabled }: { label: string; question: string; confirm?: string; onConfirm: () => unknown; disabled?: boolean }) {
  const [asking, setAsking] = useState(false)
  const yes = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (asking) yes.current?.focus()
  }, [asking])
  if (!asking)
    return (
      <button type="button" class="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    )
  return (
    <span role="group" aria-label={question} class="confirm">
      <span>{question}</span>
      <button
        ref={yes}
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false)
          void onConfirm()
        }}
      >
        {`Yes, ${confirm.toLowerCase()}`}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}
