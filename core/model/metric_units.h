#pragma once

#include <QString>

namespace autocomp {

// The units targets declare for their metrics (backend.yaml `metric:` + `unit:`), registered as the
// targets are loaded, so code that only has a metric's name (a run's row, a chart, an export) shows
// the declared unit rather than one guessed from the name. Thread-safe.
class MetricUnits
{
public:
    static void declare(const QString &metric, const QString &unit);
    // The declared unit, or empty when no loaded target declared this metric.
    static QString declared(const QString &metric);
};

} // namespace autocomp
