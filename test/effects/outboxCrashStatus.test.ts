import { describe, expect, it } from 'vitest'
import { useHoldingServer } from '../helpers/holdingServer.js'
import { EMAILS, KILL_POINTS, branchWithOutbox, commitKilledAt, nameOf, recoverAfterCrash, uncertainBodies } from './outboxCrash.js'

describe('forkpoint commit killed with SIGKILL at every step, against a service that ignores Idempotency-Key (recovered by the next status)', () => {
  const service = useHoldingServer(false)

  it.each(KILL_POINTS.map((point) => [nameOf(point), point] as const))(
    'killed at %s: every email is applied once or twice, and those applied twice are listed by effects --uncertain',
    async (_name, point) => {
      service.reset()
      const dir = await branchWithOutbox(service)
      await commitKilledAt(dir, service, point)
      await recoverAfterCrash(dir, 'status')
      expect([...service.applied.keys()].sort()).toEqual([...EMAILS].sort())
      const twice = [...service.applied].filter(([, n]) => n === 2).map(([body]) => body)
      expect([...service.applied.values()].every((n) => n === 1 || n === 2)).toBe(true)
      const uncertain = await uncertainBodies(dir, service)
      expect(uncertain).toEqual(expect.arrayContaining(twice))
      // listed: only an email whose first attempt had no recorded answer (at most the one the kill interrupted)
      expect(uncertain.length).toBeLessThanOrEqual(1)
      // the service had the request, its answer was never recorded: sent again
      const answeredUnrecorded = 'inFlight' in point ? point.inFlight : /^send:answered#(\d)$/.exec(point.step)?.[1]
      if (answeredUnrecorded) expect([twice, uncertain]).toEqual([[EMAILS[Number(answeredUnrecorded) - 1]], [EMAILS[Number(answeredUnrecorded) - 1]]])
      else expect(twice).toEqual([])
    },
  )
})
