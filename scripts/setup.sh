#!/usr/bin/env bash
# Installs everything forkpoint's demo and tests need on a fresh Debian machine:
# system packages (as root, with apt-get; otherwise it checks and says what is missing),
# the npm dependencies from the lock file, and the build.
set -euo pipefail
cd "$(dirname "$0")/.."

# docker-registry: real OCI registry for registry tests; apache2-utils: htpasswd for its auth;
# skopeo: the registry benchmark's peer and the OCI interop tests; podman: those tests' check that a container tool refuses a pushed image (an OCI artifact) cleanly; python3: the trace tests' non-Node agent (recording proxy); iproute2/util-linux: nsenter, setpriv, ipcs for branches and the tests;
# zstd, git, rsync: benchmark baselines and tools; xfsprogs: an XFS image for the reflink branch backend tests;
# gcc: cc compiling the sandbox runtime (native/sandbox.c); g++, make (with python3): node-gyp compiling better-sqlite3 and forkpoint's native/lstat_names.c.
# fuse-overlayfs (with fuse3's fusermount3): unprivileged branch paths that every tool can use (docs/branch-paths.md).
# curl: the HTTP effects tests' non-Node agent; openssl: a private CA for the TLS registry tests; procps: pgrep, pkill.
# qemu-system-x86, qemu-utils, busybox-static, e2fsprogs: machines (microVMs; the guest's kernel and a python or node image's packages are fetched with apt-get download); fakeroot: those images' files owned by root whoever builds them; librsvg2-bin: the machine benchmark's plot as PNG.
# iptables: the NAT rules that turn a sandbox's connections to the effects proxy, and a networked machine's to its relay (iptables-restore, nf_tables); time: GNU time, the hostile-input benchmark's peak RSS (/usr/bin/time -v); libseccomp-dev: the sandbox runtime's seccomp filter, compiled at build time (native/seccompFilter.c); bubblewrap: the sandbox benchmark's side-by-side baseline.
# chromium: the web view's end-to-end tests and benchmark, driven by playwright-core (which downloads no browser of its own).
# redis-server: the queue fan-out's tests and benchmark run workers against (forkpoint worker, explore/speculate --queue)
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross: the linux-arm64 prebuilt runtime and lstat helper, cross-compiled at build time
# (scripts/buildNative.mjs --prebuilds); qemu-user-static: the test that runs the arm64 runtime on this machine.
SYSTEM_PACKAGES=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static libseccomp-dev iptables bubblewrap time redis-server docker-registry apache2-utils skopeo podman iproute2 util-linux zstd git rsync xfsprogs python3 gcc g++ make fuse-overlayfs curl openssl procps qemu-system-x86 qemu-utils busybox-static e2fsprogs fakeroot librsvg2-bin chromium)

missing=()
for pkg in "${SYSTEM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing system packages: ${missing[*]} (install them as root: apt-get install ${missing[*]})" >&2
    exit 2
  fi
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build --silent
