import type { Command } from 'commander'

export function withQueueSecrets(cmd: Command): Command {
  return cmd
    .option('--queue-key-file <file>', 'the key jobs are signed with, shared by submitters and workers (default: $FORKPOINT_QUEUE_KEY)')
    .option('--queue-ca-file <file>', 'with rediss://: the CA certificate (PEM) the queue server is checked with (default: the system CAs)')
}
