import { describe, expect, it } from 'vitest'
import { netPlan, netRules } from '../../src/machine/net/machineNet.js'

/** A machine's network options, read before anything starts: what they allow, and what they refuse (exit 2). */
describe('netPlan', () => {
  it('none by default; --allow and --publish only with --net egress', async () => {
    expect(await netPlan({})).toBeNull()
    await expect(netPlan({ allow: ['127.0.0.1:80'] })).rejects.toMatchObject({ exitCode: 2 })
    await expect(netPlan({ net: 'none', publish: ['8080:80'] })).rejects.toMatchObject({ exitCode: 2 })
    await expect(netPlan({ net: 'bogus' as 'none' })).rejects.toMatchObject({ exitCode: 2 })
  })

  it('a host alone opens its ports 80 and 443; a name is resolved to IPv4 addresses; duplicates go', async () => {
    const plan = await netPlan({ net: 'egress', allow: ['127.0.0.1', 'localhost:8080', '127.0.0.1:80'] })
    expect(plan!.allow).toEqual([
      { address: '127.0.0.1', port: 80 },
      { address: '127.0.0.1', port: 443 },
      { address: '127.0.0.1', port: 8080 },
    ])
  })

  it('refuses what is not HOST[:PORT] or HOST_PORT:GUEST_PORT, IPv6, ports out of range and a port published twice', async () => {
    for (const allow of ['::1', '[::1]:80', '127.0.0.1:0', '127.0.0.1:65536', 'a b', '127.0.0.1:80:81', 'no-such-host.invalid'])
      await expect(netPlan({ net: 'egress', allow: [allow] }), allow).rejects.toMatchObject({ exitCode: 2 })
    for (const publish of [['80'], ['1:2:3'], ['0:80'], ['8080:80', '8080:81'], ['8080:80', '8081:80']])
      await expect(netPlan({ net: 'egress', publish }), publish.join(' ')).rejects.toMatchObject({ exitCode: 2 })
  })

  it("the namespace's rules: each allowed destination to its relay port, anything else leaving loopback refused", async () => {
    const plan = await netPlan({ net: 'egress', allow: ['10.1.2.3:443', '127.0.0.1:9'] })
    expect(netRules(plan!)).toBe(
      [
        '*nat',
        ':OUTPUT ACCEPT [0:0]',
        '-A OUTPUT -p tcp -d 10.1.2.3/32 --dport 443 -j REDIRECT --to-ports 1',
        '-A OUTPUT -p tcp -d 127.0.0.1/32 --dport 9 -j REDIRECT --to-ports 2',
        'COMMIT',
        '*filter',
        ':OUTPUT ACCEPT [0:0]',
        '-A OUTPUT ! -d 127.0.0.0/8 -p tcp -j REJECT --reject-with tcp-reset',
        '-A OUTPUT ! -d 127.0.0.0/8 -j REJECT',
        'COMMIT',
        '',
      ].join('\n'),
    )
  })
})
