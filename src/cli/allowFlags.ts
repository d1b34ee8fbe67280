import type { Command } from 'commander'

/** A repeatable option's values, in order. */
export function collect(value: string, list: string[] = []): string[] {
  return [...list, value]
}

/** What the service's and the MCP server's requests may reach besides the workspace (requestPolicy): `--allow-path`, `--allow-remote`. */
export function allowFlags(cmd: Command): Command {
  return cmd
    .option('--allow-path <dir>', 'a directory outside the workspace whose files requests may name (a run artifact, a file:// remote); repeatable', collect, [])
    .option('--allow-remote <remote>', 'an oci://HOST/REPO or s3://BUCKET/PREFIX that push and pull may use, with what lies beneath it; repeatable', collect, [])
}
