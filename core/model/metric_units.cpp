#include "model/metric_units.h"

#include <QHash>
#include <QMutex>

namespace autocomp {

namespace {
QMutex s_mutex;
QHash<QString, QString> &units()
{
    static QHash<QString, QString> s_units;
    return s_units;
}
} // namespace

void MetricUnits::declare(const QString &metric, const QString &unit)
{
    if (metric.isEmpty() || unit.isEmpty())
        return;
    QMutexLocker lock(&s_mutex);
    units().insert(metric, unit);
}

QString MetricUnits::declared(const QString &metric)
{
    QMutexLocker lock(&s_mutex);
    return units().value(metric);
}

} // namespace autocomp
