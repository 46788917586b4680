const mods = process.argv.slice(2)
for (const m of mods) { const t = performance.now(); await import(m); process.stdout.write(`${m.replace(/.*\//,'')} ${(performance.now()-t).toFixed(1)}  `) }
console.log()
