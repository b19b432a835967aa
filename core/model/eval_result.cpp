#include "model/eval_result.h"

#include <limits>

namespace autocomp {

double EvalResult::metricValue(const QString &metric) const
{
    const QJsonValue value = metrics.value(metric);
    if (value.isDouble())
        return value.toDouble();
    if (value.isObject()) {
        const QJsonValue median = value.toObject().value(QLatin1String("median"));
        if (median.isDouble())
            return median.toDouble();
    }
    return std::numeric_limits<double>::quiet_NaN();
}

} // namespace autocomp
