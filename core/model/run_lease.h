#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QString>

namespace autocomp {

// Who drives a run: the process that holds its lease in the store, and when it last said it is alive.
// One process at a time drives a run; a lease whose owner died (a kill, a crash, a reboot) is taken over.
struct RunLease
{
    qint64 pid = 0;
    QString host;
    QDateTime heartbeat; // UTC
    bool alive = false; // the owner still runs (same host: the pid exists; elsewhere: a recent heartbeat)
    // The owner takes plans and edited code from other processes (RunRequest); an older version does not.
    bool takesRequests = false;

    bool held() const { return pid > 0; }
    // Held by a process on this machine, or by this very process.
    bool onThisHost() const;
    bool isThisProcess() const;
    // "pid 1234 on host1, heartbeat 3 s ago"
    QString describe() const;

    // A heartbeat older than this says the owner is gone, even if its pid exists (reused after a kill or a
    // reboot, or a process stopped with SIGSTOP): its lease is taken over. 120 s; the environment variable
    // AUTOCOMP_LEASE_TIMEOUT_S (whole seconds, at least 2) sets it for tests that take a lease over.
    static int timeoutSecs();
    // How often the owner renews its heartbeat: 5 s, or a 24th of a shorter timeout (at least 0.5 s).
    static int heartbeatIntervalMs();
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::RunLease)
