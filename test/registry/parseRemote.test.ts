import { describe, expect, it } from 'vitest'
import { RemoteSpecError } from '../../src/index.js'
import { parseRemote } from '../../src/registry/transport/parseRemote.js'
import { sha256 } from '../../src/objects/digest.js'

describe('parseRemote', () => {
  it('parses the three transports with tags and digests', () => {
    expect(parseRemote('oci://127.0.0.1:5000/team/agent:v2')).toEqual({ transport: 'oci', host: '127.0.0.1:5000', repository: 'team/agent', reference: { tag: 'v2' } })
    expect(parseRemote('oci://registry.example.com/agent')).toMatchObject({ host: 'registry.example.com', repository: 'agent', reference: null })
    const d = sha256('x')
    expect(parseRemote(`oci://h:1/a@${d}`)).toMatchObject({ reference: { digest: d } })
    expect(parseRemote('file:///srv/images:stable')).toEqual({ transport: 'file', root: '/srv/images', reference: { tag: 'stable' } })
    expect(parseRemote('s3://bucket/some/prefix:v1?endpoint=http://127.0.0.1:9000&region=eu-west-1')).toEqual({
      transport: 's3',
      bucket: 'bucket',
      prefix: 'some/prefix',
      reference: { tag: 'v1' },
      options: { endpoint: 'http://127.0.0.1:9000', region: 'eu-west-1' },
    })
  })

  it('refuses bad specs with a usage error', () => {
    for (const bad of ['ftp://x/y', 'oci://hostonly', 'oci://h/Upper', 'file://relative', 'oci://h/a:bad/tag!', `oci://h/a@sha256:xyz`, 's3://B/x']) {
      expect(() => parseRemote(bad), bad).toThrow(RemoteSpecError)
    }
  })
})
