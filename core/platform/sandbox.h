#pragma once

#include <QString>
#include <QStringList>

namespace autocomp {

// What a sandboxed command sees, built as a bubblewrap command line. The lowest layer of core: it
// knows nothing of targets or evaluations, only paths. Used by the evaluation's process runner (every
// setup, judge and candidate step) and by a target's availability and hardware checks, so that
// "available" means that the steps can run.
//
// A sandboxed command sees, read-only: the system's toolchain (/usr with the merged-/usr links /bin,
// /lib, ..., the loader's cache and configuration, /etc/alternatives), a private /dev (null, zero,
// full, random, urandom, tty, shm) and /proc, then the directories the caller names and the directory
// of every absolute path in the command's own arguments; writable: one directory, and a private /tmp
// (tmpfs). No $HOME (a directory named inside it is still shown), no network, no IPC, no other /etc.
namespace Sandbox {

// bubblewrap is installed and can create namespaces here (tried once per process).
bool available();
// Why not, in one sentence with the fix; empty when available() is true.
QString unavailableReason();
QStringList systemPaths();
// The bwrap command line (ending with --chdir), before the command itself.
QStringList prefix(const QString &writableDir, const QStringList &readOnlyDirs = {}, bool sharePids = false,
                   bool gpu = false);
// prefix() for `command`, with the directory of every absolute path the command names added to the
// read-only ones (its program and its inputs: paths a backend's author wrote), except /, $HOME and the
// temporary directory themselves. The options reach bwrap through a pipe (`bash -c ... exec bwrap --args 9`),
// so the sandboxed process's /proc/1/cmdline reads "bwrap --args 9 COMMAND...", never the host's paths.
QStringList wrap(const QStringList &command, const QString &writableDir, QStringList readOnlyDirs,
                 bool sharePids = false, bool gpu = false);

} // namespace Sandbox
} // namespace autocomp
