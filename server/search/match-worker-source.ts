// The matching worker's program (match-worker.ts) as one bundled source text, made when this module is transpiled:
// by the bundler for the single executable and the server bundle (`npm run build`, `npm run build:server`, the
// Dockerfile), which inline it as a string, and at load time under `bun run` / `bun test`. The worker is started from
// it as a Blob URL, so no build needs a worker file beside its output. Loaded lazily, with the first worker.
import { bundleMatchWorker } from './match-worker-bundle' with { type: 'macro' }

export const MATCH_WORKER_SOURCE: string = bundleMatchWorker()
