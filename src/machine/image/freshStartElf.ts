/** Where a fork's first command leaves the clock and seed for `FRESH_START_PATH`: 16 bytes of `struct timespec`, then 32 of seed. */
export const FRESH_START_INPUT = '/tmp/.forkpoint-fresh'
/** The program, in both kinds of guest. */
export const FRESH_START_PATH = '/bin/forkpoint-fresh'

/**
 * A forked child's fresh start, a 340-byte static x86-64 program we emit: it reads
 * `FRESH_START_INPUT` (and removes it), sets the clock from it (the guest's stopped at the
 * snapshot), writes its seed to /dev/urandom and asks the kernel to reseed now
 * (`RNDRESEEDCRNG`): a child holds its parent's generator, so children read the same
 * "random" bytes until then, and a written seed alone is only mixed into the input pool.
 * One small program instead of busybox's `date` and a reseed program: under TCG a child's
 * first command pays for translating every program it starts, and busybox's start-up was
 * a fifth of a fork's CPU. busybox has no applet for the ioctl; emitting these bytes spares
 * every user a C toolchain and a static libc. Exit code 0, or the step that failed (1-6).
 * Assembled with GNU as from the listing in the comments.
 */
export function freshStartElf(): Buffer {
  // prettier-ignore
  const code = Buffer.from([
    0x48, 0x83, 0xec, 0x40,                     // sub  rsp, 64             (room for what is read)
    0xb8, 0x02, 0x00, 0x00, 0x00,               // mov  eax, 2              (open)
    0x48, 0x8d, 0x3d, 0xa9, 0x00, 0x00, 0x00,   // lea  rdi, [rip+0xa9]     (FRESH_START_INPUT)
    0x31, 0xf6,                                 // xor  esi, esi            (O_RDONLY)
    0x0f, 0x05,                                 // syscall
    0xbf, 0x01, 0x00, 0x00, 0x00,               // mov  edi, 1
    0x85, 0xc0,                                 // test eax, eax
    0x0f, 0x88, 0x91, 0x00, 0x00, 0x00,         // js   fail
    0x89, 0xc7,                                 // mov  edi, eax            (the fd)
    0x31, 0xc0,                                 // xor  eax, eax            (read)
    0x48, 0x89, 0xe6,                           // mov  rsi, rsp
    0xba, 0x30, 0x00, 0x00, 0x00,               // mov  edx, 48
    0x0f, 0x05,                                 // syscall
    0xbf, 0x02, 0x00, 0x00, 0x00,               // mov  edi, 2
    0x83, 0xf8, 0x30,                           // cmp  eax, 48
    0x75, 0x79,                                 // jne  fail
    0xb8, 0x57, 0x00, 0x00, 0x00,               // mov  eax, 87             (unlink)
    0x48, 0x8d, 0x3d, 0x74, 0x00, 0x00, 0x00,   // lea  rdi, [rip+0x74]     (FRESH_START_INPUT)
    0x0f, 0x05,                                 // syscall
    0xb8, 0xe3, 0x00, 0x00, 0x00,               // mov  eax, 227            (clock_settime)
    0x31, 0xff,                                 // xor  edi, edi            (CLOCK_REALTIME)
    0x48, 0x89, 0xe6,                           // mov  rsi, rsp            (the timespec read)
    0x0f, 0x05,                                 // syscall
    0xbf, 0x03, 0x00, 0x00, 0x00,               // mov  edi, 3
    0x85, 0xc0,                                 // test eax, eax
    0x75, 0x56,                                 // jne  fail
    0xb8, 0x02, 0x00, 0x00, 0x00,               // mov  eax, 2              (open)
    0x48, 0x8d, 0x3d, 0x67, 0x00, 0x00, 0x00,   // lea  rdi, [rip+0x67]     ("/dev/urandom")
    0xbe, 0x01, 0x00, 0x00, 0x00,               // mov  esi, 1              (O_WRONLY)
    0x0f, 0x05,                                 // syscall
    0xbf, 0x04, 0x00, 0x00, 0x00,               // mov  edi, 4
    0x85, 0xc0,                                 // test eax, eax
    0x78, 0x3a,                                 // js   fail
    0x89, 0xc3,                                 // mov  ebx, eax            (the fd)
    0xb8, 0x01, 0x00, 0x00, 0x00,               // mov  eax, 1              (write)
    0x89, 0xdf,                                 // mov  edi, ebx
    0x48, 0x8d, 0x74, 0x24, 0x10,               // lea  rsi, [rsp+16]       (the seed)
    0xba, 0x20, 0x00, 0x00, 0x00,               // mov  edx, 32
    0x0f, 0x05,                                 // syscall
    0xbf, 0x05, 0x00, 0x00, 0x00,               // mov  edi, 5
    0x83, 0xf8, 0x20,                           // cmp  eax, 32
    0x75, 0x1b,                                 // jne  fail
    0xb8, 0x10, 0x00, 0x00, 0x00,               // mov  eax, 16             (ioctl)
    0x89, 0xdf,                                 // mov  edi, ebx
    0xbe, 0x07, 0x52, 0x00, 0x00,               // mov  esi, 0x5207         (RNDRESEEDCRNG = _IO('R', 7))
    0x31, 0xd2,                                 // xor  edx, edx
    0x0f, 0x05,                                 // syscall
    0xbf, 0x06, 0x00, 0x00, 0x00,               // mov  edi, 6
    0x85, 0xc0,                                 // test eax, eax
    0x75, 0x02,                                 // jne  fail
    0x31, 0xff,                                 // xor  edi, edi            (exit code 0)
    0xb8, 0xe7, 0x00, 0x00, 0x00,               // fail: mov eax, 231       (exit_group)
    0x0f, 0x05,                                 // syscall
    ...Buffer.from(`${FRESH_START_INPUT}\0/dev/urandom\0`),
  ])
  const base = 0x400000
  const headers = 64 + 56
  const size = headers + code.length
  const elf = Buffer.alloc(size)
  elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0) // ELF, 64-bit, little-endian, version 1, System V
  elf.writeUInt16LE(2, 16) // an executable
  elf.writeUInt16LE(0x3e, 18) // x86-64
  elf.writeUInt32LE(1, 20)
  elf.writeBigUInt64LE(BigInt(base + headers), 24) // entry
  elf.writeBigUInt64LE(64n, 32) // program headers follow the ELF header
  elf.writeUInt16LE(64, 52)
  elf.writeUInt16LE(56, 54)
  elf.writeUInt16LE(1, 56) // one program header
  elf.writeUInt32LE(1, 64) // PT_LOAD: the whole file, read and execute
  elf.writeUInt32LE(5, 68)
  elf.writeBigUInt64LE(0n, 72)
  elf.writeBigUInt64LE(BigInt(base), 80)
  elf.writeBigUInt64LE(BigInt(base), 88)
  elf.writeBigUInt64LE(BigInt(size), 96)
  elf.writeBigUInt64LE(BigInt(size), 104)
  elf.writeBigUInt64LE(0x1000n, 112)
  code.copy(elf, headers)
  return elf
}
