#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QString>

namespace autocomp {

// Who drives a run: the process that holds its lease in the store, and when it last said it is alive.
// One process at a time drives a run; a lease whose owner died (a kill, a crash, a reboot) is taken over.
struct RunLease {
    qint64 pid = 0;
    QString host;
    QDateTime heartbeat; // UTC
    bool alive = false;  // the owner still runs (same host: the pid exists; elsewhere: a recent heartbeat)
    // The owner takes plans and edited code from other processes (RunRequest); an older version does not.
    bool takesRequests = false;

    bool held() const { return pid > 0; }
    // Held by a process on this machine, or by this very process.
    bool onThisHost() const;
    bool isThisProcess() const;
    // "pid 1234 on host1, heartbeat 3 s ago"
    QString describe() const;
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::RunLease)
