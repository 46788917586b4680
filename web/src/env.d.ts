// Style sheets are imported for their effect: the bundler emits them as the console's one CSS file.
declare module '*.css'
