// The S3 server that test/run.sh starts for the suite, as tests see it. Tests that need it fail (never skip)
// when it is not there, so the S3 backend is tested wherever the suite runs.
import * as Minio from 'minio'
import type { S3Config } from '../server/blob'

export const MISSING_S3 = 'QUARRY_TEST_S3_* is not set: run the suite with `npm test` (test/run.sh starts the S3 server)'

export interface TestS3 {
  config: S3Config
  /** A minio client on the same server, for what the blob store does not expose (buckets, incomplete uploads). */
  minio: Minio.Client
  /**
   * Keys under `prefix` with a multipart upload that was started and never completed or aborted. An upload
   * that failed is aborted right after the put rejects, so this waits (up to 3 s) for such aborts to land.
   */
  incompleteUploads(prefix: string): Promise<string[]>
}

export function testS3(): TestS3 | undefined {
  const env = process.env
  const endpoint = env.QUARRY_TEST_S3_ENDPOINT
  const bucket = env.QUARRY_TEST_S3_BUCKET
  const accessKey = env.QUARRY_TEST_S3_ACCESS_KEY
  const secretKey = env.QUARRY_TEST_S3_SECRET_KEY
  if (!endpoint || !bucket || !accessKey || !secretKey) return undefined
  const config: S3Config = { endpoint, bucket, accessKey, secretKey, region: env.QUARRY_TEST_S3_REGION ?? 'us-east-1' }
  const url = new URL(endpoint)
  const minio = new Minio.Client({
    endPoint: url.hostname,
    port: Number(url.port),
    useSSL: false,
    accessKey,
    secretKey,
    region: config.region,
    pathStyle: true,
  })
  return {
    config,
    minio,
    async incompleteUploads(prefix) {
      const deadline = Date.now() + 3000
      for (;;) {
        const out: string[] = []
        try {
          for await (const u of minio.listIncompleteUploads(bucket, prefix, true)) out.push(u.key)
        } catch (e) {
          // an upload aborted between minio's listing and its per-upload part listing
          const code = (e as { code?: string }).code
          if (code !== 'NoSuchKey' && code !== 'NoSuchUpload') throw e
          out.push('(aborting)')
        }
        if (out.length === 0 || Date.now() > deadline) return out
        await Bun.sleep(50)
      }
    },
  }
}
