#!/usr/bin/env bash
# Install what the browser end-to-end tests need, and nothing that is already there:
#   - Chromium from Debian's packages (/usr/bin/chromium);
#   - Playwright's Python package into the project's venv (default: .venv next to this script's repo).
# The tests drive the system Chromium through `executable_path`; `playwright install` (which downloads
# its own browser builds) is never run.
#
# Usage: scripts/install-test-tools.sh [PYTHON]     (PYTHON defaults to .venv/bin/python, else python3)
# Idempotent: a second run does nothing and prints nothing but its final line.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${1:-}"
if [[ -z "$py" ]]; then
    if [[ -x "$repo/.venv/bin/python" ]]; then py="$repo/.venv/bin/python"; else py="$(command -v python3)"; fi
fi

sudo_cmd=()
if [[ "$(id -u)" -ne 0 ]]; then sudo_cmd=(sudo); fi

if ! command -v chromium >/dev/null 2>&1 && [[ ! -x /usr/bin/chromium ]]; then
    echo "install-test-tools: installing chromium (Debian)" >&2
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
        chromium fonts-dejavu-core >/dev/null
fi

if ! "$py" -c "import playwright.sync_api" >/dev/null 2>&1; then
    echo "install-test-tools: installing playwright (PyPI) into $py" >&2
    "$py" -m pip install --quiet --disable-pip-version-check "playwright>=1.40,<2"
fi

# fio, for the real-device tests (tests/test_fio_real.py): Debian's package. The tests also use
# util-linux (losetup, blkdiscard, wipefs, blkid, fallocate) and e2fsprogs (mkfs.ext4), present
# on Debian by default; smartctl is optional (SMART write counters on real drives only).
if ! command -v fio >/dev/null 2>&1; then
    echo "install-test-tools: installing fio (Debian)" >&2
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends fio >/dev/null
fi
echo "install-test-tools: $(fio --version 2>/dev/null || echo 'fio missing'): ok"

# blktrace and blkparse, for the blkparse tests (tests/test_replay_blkparse.py): the fixtures are
# compared with what the installed blkparse prints, and as root a live capture on a loop device
# is replayed. Debian's package.
if ! command -v blkparse >/dev/null 2>&1 || ! command -v blktrace >/dev/null 2>&1; then
    echo "install-test-tools: installing blktrace (Debian)" >&2
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends blktrace >/dev/null
fi
echo "install-test-tools: $(blkparse -V 2>/dev/null || echo 'blkparse missing'): ok"

# The NBD clients and servers of the ssdlab serve tests (tests/test_serve*.py, make bench-serve):
# qemu-utils (qemu-io, qemu-img, qemu-nbd, qemu-storage-daemon), libnbd-bin (nbdinfo, nbdcopy)
# and nbdkit (its memory plugin, the bench's reference). Debian's packages.
missing_nbd=()
command -v qemu-io >/dev/null 2>&1 || missing_nbd+=(qemu-utils)
command -v qemu-storage-daemon >/dev/null 2>&1 || missing_nbd+=(qemu-utils)
command -v nbdinfo >/dev/null 2>&1 || missing_nbd+=(libnbd-bin)
command -v nbdkit >/dev/null 2>&1 || missing_nbd+=(nbdkit)
if [[ ${#missing_nbd[@]} -gt 0 ]]; then
    echo "install-test-tools: installing ${missing_nbd[*]} (Debian)" >&2
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing_nbd[@]}" >/dev/null
fi
echo "install-test-tools: $(qemu-io --version 2>/dev/null | head -1 || echo 'qemu-io missing'), $(nbdkit --version 2>/dev/null || echo 'nbdkit missing'): ok"

echo "install-test-tools: chromium $(command -v chromium || echo /usr/bin/chromium), playwright for $py: ok"
