#include "model/run_lease.h"

#include <QCoreApplication>
#include <QSysInfo>

namespace autocomp {

bool RunLease::onThisHost() const { return held() && host == QSysInfo::machineHostName(); }

bool RunLease::isThisProcess() const { return onThisHost() && pid == QCoreApplication::applicationPid(); }

QString RunLease::describe() const
{
    if (!held())
        return QStringLiteral("no process");
    const qint64 age = heartbeat.isValid() ? heartbeat.secsTo(QDateTime::currentDateTimeUtc()) : -1;
    return QStringLiteral("pid %1 on %2, heartbeat %3")
        .arg(pid)
        .arg(host, age < 0 ? QStringLiteral("never") : QStringLiteral("%1 s ago").arg(qMax<qint64>(0, age)));
}

int RunLease::timeoutSecs()
{
    static const int s_timeout = [] {
        const int value = qEnvironmentVariableIntValue("AUTOCOMP_LEASE_TIMEOUT_S");
        return value >= 2 ? value : 120;
    }();
    return s_timeout;
}

int RunLease::heartbeatIntervalMs() { return qBound(500, timeoutSecs() * 1000 / 24, 5000); }

} // namespace autocomp
