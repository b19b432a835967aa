#pragma once

#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace autocomp {

// One step of an evaluation as it ran (DESIGN.md §5).
struct StepResult {
    QString name;
    QStringList command;
    int exitCode = -1;
    bool timedOut = false;
    bool crashed = false;
    double durationMs = 0;
    QString log; // stdout+stderr, trimmed
    bool outputFlooded = false; // killed for writing far more output than is kept
    // Never ran as asked, for a reason of the machine (not a verdict): its limits could not be applied,
    // its program could not be started or loaded, or the sandbox could not set itself up.
    bool setupFailed = false;
};

// The parsed result.json of an evaluation plus the steps that produced it.
struct EvalResult {
    QString status; // ok | compile_error | incorrect | timeout | crash | rejected | error
    bool correct = false;
    QJsonObject metrics;
    QStringList feedback;
    QStringList flags;
    QString log;
    QList<StepResult> steps;

    // The value of `metric` (median when it is a distribution object); NaN when absent.
    double metricValue(const QString &metric) const;
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::EvalResult)
