#!/usr/bin/env bash
# Install the Debian packages tenferro-web's commands need, only those that are missing:
# Chromium (its SwiftShader gives a WebGPU adapter without a GPU), its WebDriver, Firefox ESR
# (its own WebGPU, on lavapipe here), Node/npm, Python's venv and Mesa's lavapipe. Safe to run again; quick when everything is there.
set -euo pipefail

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
command -v firefox-esr >/dev/null || need+=(firefox-esr)
command -v npm >/dev/null || need+=(nodejs npm)
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
# Mesa's CPU Vulkan driver (lavapipe) for the native lane (wgpu-native outside the browser).
ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || need+=(mesa-vulkan-drivers)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "setup_system: installing ${need[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup_system: need root or sudo to apt-get install ${need[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${need[@]}"
