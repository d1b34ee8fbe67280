import type { ChildProcess } from 'node:child_process'
import { afterAll } from 'vitest'
import type { RunningService } from '../../src/service/httpService.js'

/** Services a test file starts, in its process or as `forkpoint serve` processes: closed or stopped after the file. */
export function useServices(): { services: RunningService[]; children: ChildProcess[] } {
  const started = { services: [] as RunningService[], children: [] as ChildProcess[] }
  afterAll(async () => {
    await Promise.all(started.services.map((s) => s.close()))
    for (const child of started.children) child.kill('SIGTERM')
  })
  return started
}
