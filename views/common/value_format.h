#pragma once

#include <QJsonValue>
#include <QString>

namespace autocomp {

// Human-readable figures with their units, shared by the models and the inspector.
class ValueFormat
{
public:
    // The unit stored with the run (RunInfo::metricUnit, its target's backend.yaml `unit:`) when there is one,
    // else the one the metric's name says: "latency_ms" -> "ms", "throughput_gflops" -> "GFLOP/s"; empty when
    // neither says.
    static QString unitOfMetric(const QString &metric, const QString &unit = {});
    // A metric value with its unit (as unitOfMetric() finds it), e.g. "1.234 ms".
    static QString score(double value, const QString &metric, const QString &unit = {});
    // A metric from result.json: a number, or a distribution object {median, mean, p99, ...}.
    static QString metricValue(const QString &metric, const QJsonValue &value, const QString &unit = {});
    static QString speedup(double factor);
    // Three significant digits, with the metric's unit: "7.40 ms", "36.7 GFLOP/s".
    static QString figure(double value, const QString &metric, const QString &unit = {});
    // A speedup to three significant digits: "36.7×", "3.30×"; factorValue without the sign.
    static QString factor(double factor);
    static QString factorValue(double factor);
    static QString dollars(double usd);
    static QString durationMs(double ms);
    static QString number(double value);
    // The first line of a message that may carry a whole log (a run's stop reason), at most 300 characters;
    // `truncated` tells whether anything was left out.
    static QString summary(const QString &text, bool *truncated = nullptr);
};

} // namespace autocomp
