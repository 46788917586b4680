// Imported `with { type: 'file' }` (plugins/system/docs.ts): the module is the file's path, not its code.
declare const path: string
export default path
