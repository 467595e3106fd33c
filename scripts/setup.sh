#!/usr/bin/env bash
# Sets up everything Vajra needs on a fresh Debian/Ubuntu machine:
# a Vulkan driver (lavapipe where no GPU driver exists), the Python venv, and Node deps.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

# The shared-library cache. ldconfig lives in /sbin, which a non-root Debian user's PATH
# lacks. Captured, not piped into `grep -q`: under pipefail an early grep exit kills the
# writer (SIGPIPE) and a found library would read as missing.
ldconfig_p() {
  local bin
  for bin in "$(command -v ldconfig || true)" /sbin/ldconfig /usr/sbin/ldconfig; do
    if [ -n "$bin" ] && [ -x "$bin" ]; then "$bin" -p 2>/dev/null || true; return 0; fi
  done
}
have_lib() { local libs; libs=$(ldconfig_p); grep -q "$1" <<<"$libs"; }

# A Vulkan driver is present when the loader is installed and at least one ICD manifest
# exists: in the standard folders, or named by the loader's own environment variables.
have_vulkan_icd() {
  have_lib 'libvulkan.so.1' || return 1
  local dir file named="${VK_DRIVER_FILES:-}:${VK_ICD_FILENAMES:-}"
  for dir in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
    for file in "$dir"/*.json; do [ -e "$file" ] && return 0; done
  done
  for file in ${named//:/ }; do [ -e "$file" ] && return 0; done
  return 1
}

if ! have_vulkan_icd; then
  if command -v apt-get >/dev/null; then
    echo "setup: no Vulkan driver found; installing Mesa's lavapipe (mesa-vulkan-drivers)"
    { as_root apt-get update -qq >/dev/null \
      && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null; } \
      || echo "setup: lavapipe did not install; install a Vulkan driver (mesa-vulkan-drivers) by hand" >&2
  else
    echo "setup: no Vulkan driver and no apt-get: install a Vulkan driver (lavapipe) by hand" >&2
  fi
fi

# Dawn (npm 'webgpu') runs on Mesa's OpenGL ES through EGL when there is no GPU.
if command -v node >/dev/null && ! have_lib 'libEGL_mesa.so'; then
  if command -v apt-get >/dev/null; then
    echo "setup: installing Mesa's EGL/GLES for the browser (Tint) checks"
    { as_root apt-get update -qq >/dev/null \
      && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq libegl1 libegl-mesa0 libgles2 libgl1-mesa-dri >/dev/null; } \
      || echo "setup: Mesa's EGL did not install; the Tint checks may be skipped" >&2
  fi
fi

# Headless Chromium is the first judge of exports: it runs the exported TypeScript module
# with WebGPU (SwiftShader where no GPU is allowed). Debian's package; playwright-python
# (the test and browser extras) drives it, so no browser is downloaded. VAJRA_BROWSER=off skips it.
have_chromium() {
  local name
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    command -v "$name" >/dev/null && return 0
  done
  return 1
}
if [ "${VAJRA_BROWSER:-}" != off ] && ! have_chromium; then
  if command -v apt-get >/dev/null; then
    echo "setup: installing Debian's chromium (headless, the judge of exported modules)"
    # optional: a host without a package mirror (an offline GPU box) goes on without it
    { as_root apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq chromium >/dev/null; } \
      || echo "setup: chromium did not install; exports will be judged by Node/Dawn" >&2
  else
    echo "setup: no chromium and no apt-get: install Chromium or Chrome to judge exports in a browser" >&2
  fi
fi

PY=${PYTHON:-python3}
# `python3 -m venv` needs ensurepip, which stock Debian splits off into python3-venv.
have_venv() { "$PY" -c 'import ensurepip, venv' 2>/dev/null; }
if ! have_venv && command -v apt-get >/dev/null; then
  echo "setup: $PY cannot create a venv; installing python3-venv"
  ver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
  { as_root apt-get update -qq >/dev/null \
    && { DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq python3-venv >/dev/null 2>&1; have_venv \
         || DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "python$ver-venv" >/dev/null 2>&1; }; } || true
fi
if ! have_venv; then
  echo "setup: $PY cannot create a venv: install python3-venv (apt-get install python3-venv) and run again" >&2
  exit 1
fi
# a venv that an earlier run without ensurepip left half made has a python but no pip
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --no-compile -e '.[test]'
# Byte-compiled here on every core: pip compiles what it installs one file at a time (25 of
# its 53 s on a 2-core machine; -j 0 takes 15), and an editable install leaves Vajra's own
# modules uncompiled. Where PYTHONDONTWRITEBYTECODE is set (CI images often set it) nothing is
# compiled later either, and every process compiled its imports again at each start (a GPU
# worker 0.1 s of Vajra's alone, the CLI 0.2 s). A file edited later is compiled as before.
# It runs beside the Node setup below (npm's downloads wait on the network), and is waited for.
.venv/bin/python -m compileall -q -j 0 vajra_tui \
  "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null 2>&1 &
compiling=$!

# Node and the npm 'webgpu' package (Dawn) check kernels the way browsers do and run
# the exported TypeScript. Without Node, only that check is skipped.
if command -v npm >/dev/null && command -v node >/dev/null; then
  .venv/bin/vajra-tui setup-node --timeout 300 \
    || echo "setup: npm install failed; browser (Tint) checks will be skipped" >&2
else
  echo "setup: node/npm not found; browser (Tint) checks will be skipped" >&2
fi
.venv/bin/vajra-tui doctor | grep -E 'chromium|ts→js' || true  # what judges exports here
wait "$compiling" || true
echo "setup: done"
