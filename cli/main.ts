#!/usr/bin/env bun
// `quarry`: the companion command. For now it starts the server; token, user, group and search commands
// come with the CLI issue and talk to a server over its HTTP API only.
import { defineCommand, runMain } from 'citty'
import pkg from '../package.json'

export const cli = defineCommand({
  meta: { name: 'quarry', version: pkg.version, description: 'Quarry web server and operator tool' },
  subCommands: {
    serve: defineCommand({
      meta: { name: 'serve', description: 'Start the server (configured by QUARRY_* environment variables, see README)' },
      async run() {
        const { main } = await import('../server/main')
        await main()
      },
    }),
  },
})

if (import.meta.main) await runMain(cli)
