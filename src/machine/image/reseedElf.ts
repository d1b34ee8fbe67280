/**
 * `/bin/reseed` of the busybox guest: a 179-byte static x86-64 program that asks the
 * kernel to reseed its random generator now (`ioctl(open("/dev/urandom"), RNDRESEEDCRNG)`).
 * A forked child holds its parent's generator state, so children read the same "random"
 * bytes until it reseeds, and writing a seed to /dev/urandom only mixes it into the input
 * pool. busybox has no applet for the ioctl; emitting these bytes spares every user a C
 * toolchain and a static libc. The exit code is the ioctl's error number (0: done).
 */
export function reseedElf(): Buffer {
  // prettier-ignore
  const code = Buffer.from([
    0xb8, 0x02, 0x00, 0x00, 0x00, //             mov eax, 2          (open)
    0x48, 0x8d, 0x3d, 0x22, 0x00, 0x00, 0x00, // lea rdi, [rip+34]   ("/dev/urandom")
    0xbe, 0x01, 0x00, 0x00, 0x00, //             mov esi, 1          (O_WRONLY)
    0x0f, 0x05, //                               syscall
    0x89, 0xc7, //                               mov edi, eax        (the fd, or -errno)
    0xb8, 0x10, 0x00, 0x00, 0x00, //             mov eax, 16         (ioctl)
    0xbe, 0x07, 0x52, 0x00, 0x00, //             mov esi, 0x5207     (RNDRESEEDCRNG = _IO('R', 7))
    0x31, 0xd2, //                               xor edx, edx
    0x0f, 0x05, //                               syscall
    0x89, 0xc7, //                               mov edi, eax
    0xf7, 0xdf, //                               neg edi             (exit code = errno)
    0xb8, 0xe7, 0x00, 0x00, 0x00, //             mov eax, 231        (exit_group)
    0x0f, 0x05, //                               syscall
    ...Buffer.from('/dev/urandom\0'),
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
