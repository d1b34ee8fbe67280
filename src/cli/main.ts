import { main } from './program.js'

// bundled as CommonJS (scripts/bundleCli.mjs): no top-level await
void main(process.argv).then((code) => process.exit(code))
