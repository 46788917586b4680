// `quarry completion bash|zsh`: a completion script generated from the command tree itself, so it always offers
// exactly the commands and options this build has. The script walks the words typed so far down the tree and
// offers what the command reached takes: its subcommands, its own options, the global options it uses (the commands
// that act on this host rather than a server take none of --server, --token, --ca), and the literal values of its
// positional arguments (the lower-case words of a value hint such as `bash|zsh`; `UID|NAME` names no literal value).
import type { ArgsDef, CommandDef } from 'citty'

interface Node { subs: string[]; options: string[] }

async function resolve<T>(v: T | Promise<T> | (() => T | Promise<T>)): Promise<T> {
  return typeof v === 'function' ? await (v as () => T | Promise<T>)() : await v
}

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

/** The literal values a positional argument's value hint lists (`bash|zsh`); none for placeholders (`UID|NAME`). */
export function literalValues(valueHint: string | undefined): string[] {
  const words = (valueHint ?? '').split('|')
  return words.every((w) => /^[a-z][a-z0-9-]*$/.test(w)) ? words : []
}

/**
 * Every command path ("" for the root, " token create" below it) with what it offers: subcommands, positional values,
 * options. `globalsOf(path)` names the global options the command at `path` takes.
 */
export async function commandTree(root: CommandDef<any>, globalsOf: (path: string) => string[]): Promise<Map<string, Node>> {
  const tree = new Map<string, Node>()
  async function walk(cmd: CommandDef<any>, path: string) {
    const args = ((await resolve(cmd.args)) ?? {}) as ArgsDef
    const subs = ((await resolve(cmd.subCommands)) ?? {}) as Record<string, CommandDef<any>>
    const options = Object.entries(args)
      .filter(([, d]) => d.type !== 'positional')
      .map(([n]) => `--${kebab(n)}`)
    const values = Object.values(args)
      .filter((d) => d.type === 'positional')
      .flatMap((d) => literalValues('valueHint' in d ? d.valueHint : undefined))
    tree.set(path, { subs: [...Object.keys(subs), ...values], options: [...new Set([...options, ...globalsOf(path), '--help'])] })
    for (const [name, sub] of Object.entries(subs)) await walk(await resolve(sub), `${path} ${name}`)
  }
  await walk(root, '')
  return tree
}

function cases(tree: Map<string, Node>, indent: string, assign: (words: string) => string): string {
  return [...tree]
    .map(([path, node]) => `${indent}"${path}") ${assign([...node.subs, ...node.options].join(' '))} ;;`)
    .join('\n')
}

function knownPaths(tree: Map<string, Node>): string {
  return [...tree.keys()].filter((p) => p !== '').map((p) => `"${p}"`).join('|')
}

export function bashScript(tree: Map<string, Node>): string {
  return `# bash completion for quarry; load with:  source <(quarry completion bash)
_quarry() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" word words i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case "$path $word" in
      ${knownPaths(tree)}) path="$path $word" ;;
    esac
  done
  case "$path" in
${cases(tree, '    ', (w) => `words="${w}"`)}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _quarry quarry
`
}

export function zshScript(tree: Map<string, Node>): string {
  return `#compdef quarry
# zsh completion for quarry; load with:  source <(quarry completion zsh)   (after compinit)
_quarry() {
  local qpath="" word i
  local -a qwords
  for ((i = 2; i < CURRENT; i++)); do
    word="\${words[i]}"
    case "$qpath $word" in
      ${knownPaths(tree)}) qpath="$qpath $word" ;;
    esac
  done
  case "$qpath" in
${cases(tree, '    ', (w) => `qwords=(${w})`)}
  esac
  compadd -- "\${qwords[@]}"
}
if [[ "\${funcstack[1]}" == "_quarry" ]]; then
  _quarry "$@"
else
  compdef _quarry quarry
fi
`
}
