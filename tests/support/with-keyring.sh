#!/bin/sh
# Runs a command against a real, private, unlocked gnome-keyring on a private D-Bus session bus, so keychain
# tests neither need nor touch the user's keyring:
#   with-keyring.sh COMMAND [ARGS...]
# The keyring lives in a temporary XDG_DATA_HOME removed afterwards. Unlocking with a password on stdin makes
# the daemon create the "login" collection (the default alias) when none exists; an empty password creates
# nothing (the daemon then asks a GUI prompter, which fails headless), hence a throwaway one.
set -eu

if [ "${AUTOCOMP_KEYRING_INNER:-}" != 1 ]; then
    for tool in dbus-run-session gnome-keyring-daemon; do
        command -v "$tool" >/dev/null 2>&1 || { echo "with-keyring.sh: $tool not found (apt-get install dbus gnome-keyring)" >&2; exit 1; }
    done
    dir=$(mktemp -d "${TMPDIR:-/tmp}/autocomp-keyring.XXXXXX")
    mkdir -m 700 "$dir/data" "$dir/runtime"
    status=0
    AUTOCOMP_KEYRING_INNER=1 XDG_DATA_HOME="$dir/data" XDG_RUNTIME_DIR="$dir/runtime" HOME="$dir" \
        dbus-run-session -- "$0" "$@" || status=$?
    rm -rf "$dir"
    exit "$status"
fi

# Inside the private bus: start the secrets component, unlocked. --replace in case a daemon was already
# activated on this bus.
printf 'autocomp-test-keyring\n' | gnome-keyring-daemon --replace --unlock --components=secrets --daemonize >/dev/null
export AUTOCOMP_TEST_KEYRING=1
# The daemon exits with the bus when dbus-run-session ends.
exec "$@"
