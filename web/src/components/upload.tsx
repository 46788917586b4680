// A button that picks a file and hands it over at once (for "upload new contents" on a row): a real file input,
// focusable and labelled, styled as a button.
export function UploadButton({ label, onFile, disabled }: { label: string; onFile: (file: File) => void; disabled?: boolean }) {
  return (
    <label class="button upload">
      {label}
      <input
        type="file"
        class="sr"
        disabled={disabled}
        onChange={(e) => {
          const file = e.currentTarget.files?.[0]
          e.currentTarget.value = ''
          if (file) onFile(file)
        }}
      />
    </label>
  )
}

/** A multipart body with the one part `file` (the API's upload shape). */
export function fileForm(file: File, fields: Record<string, string> = {}): FormData {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.set(k, v)
  form.set('file', file)
  return form
}
