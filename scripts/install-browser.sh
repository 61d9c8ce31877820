#!/bin/sh
# Install Debian's chromium and chromium-driver for the rating tool's browser tests.
# Does nothing when both are already there; never downloads a browser build of its own.
set -eu

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "install-browser.sh: need root (or sudo) to apt-get install chromium chromium-driver" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y chromium chromium-driver
