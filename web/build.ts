// Builds the web console (web/src, served at `/` by plugins/console) into web/dist: one JavaScript and one CSS
// file, each named by the hash of its bytes (so a browser may keep them for good), and index.html naming both.
// Run by `npm run build:web`, which `npm start`, `npm test`, `npm run build` and the Dockerfile run first.
import { Glob } from 'bun'
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'

export const WEB_DIR = import.meta.dir
export const DIST_DIR = join(WEB_DIR, 'dist')

/** The page: no inline script or style (the console's CSP admits neither), one script and one style sheet. */
function indexHtml(script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Quarry</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/${style}">
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Quarry console needs JavaScript.</noscript>
</body>
</html>
`
}

/**
 * Builds into `outdir` without a moment in which a running server could miss a file it named: the bundle goes to a
 * fresh directory first, its hashed files are moved in (the same bytes keep the same names), index.html is replaced
 * by a rename, and only then are files of earlier builds removed.
 */
export async function buildConsole(outdir = DIST_DIR): Promise<{ files: string[] }> {
  await mkdir(outdir, { recursive: true })
  const staging = await mkdtemp(join(outdir, '..', '.dist-'))
  try {
    const result = await Bun.build({
      entrypoints: [join(WEB_DIR, 'src', 'main.tsx')],
      outdir: staging,
      target: 'browser',
      format: 'esm',
      minify: true,
      naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
      define: { 'process.env.NODE_ENV': '"production"' },
      tsconfig: join(WEB_DIR, 'tsconfig.json'),
    } as Parameters<typeof Bun.build>[0])
    if (!result.success) throw new AggregateError(result.logs, 'the console did not build')
    const files = result.outputs.map((o) => basename(o.path))
    const script = files.find((f) => f.endsWith('.js'))
    const style = files.find((f) => f.endsWith('.css'))
    if (!script || !style) throw new Error(`the console build made no script or style sheet: ${files.join(', ')}`)
    for (const f of files) await rename(join(staging, f), join(outdir, f))
    await writeFile(join(staging, 'index.html'), indexHtml(script, style))
    await rename(join(staging, 'index.html'), join(outdir, 'index.html'))
    const kept = new Set([...files, 'index.html'])
    for (const f of await readdir(outdir)) if (!kept.has(f)) await rm(join(outdir, f), { recursive: true, force: true })
    return { files: [...kept] }
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const started = performance.now()
  const { files } = await buildConsole()
  let bytes = 0
  for (const f of new Glob('*').scanSync(DIST_DIR)) bytes += Bun.file(join(DIST_DIR, f)).size
  console.log(`web console built in ${Math.round(performance.now() - started)} ms: ${files.length} files, ${bytes} bytes in web/dist`)
}
