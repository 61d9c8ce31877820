#!/bin/sh
# Install Debian's bubblewrap, the sandbox every harness of `flightdeck experiment run` runs in.
# Does nothing when bwrap is already there; then checks that it can start a sandbox here.
set -eu

if ! command -v bwrap >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=""
    elif command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install-sandbox.sh: need root (or sudo) to apt-get install bubblewrap" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update
    $SUDO apt-get install -y bubblewrap
fi

if ! bwrap --ro-bind / / --proc /proc --dev /dev --unshare-all --die-with-parent -- true; then
    echo "install-sandbox.sh: bwrap is installed but cannot create namespaces here;" \
        "allow user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run" \
        "experiments with --sandbox none" >&2
    exit 1
fi
