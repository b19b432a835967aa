#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace autocomp {

enum class RunState { Created, Running, Paused, Finished, Stopped, Failed };
QString toString(RunState state);
RunState runStateFromString(const QString &text);

// A run's row in the store: identity, configuration and totals.
struct RunInfo
{
    qint64 id = 0;
    QString target;
    QString problem;
    QString agent;
    QString configYaml;
    RunState state = RunState::Created;
    QString stopReason;
    QString label; // e.g. "example run recorded with scripted responses"
    QDateTime createdAt;
    QDateTime updatedAt;
    int iteration = 0; // last finished iteration
    double baselineScore = 0; // root candidate's metric value
    double bestScore = 0;
    qint64 bestCandidateId = 0;
    QString metric; // e.g. latency_ms
    // The unit the run's target declared for its metric (backend.yaml `unit:`), stored with the run so that
    // views and exports show it without loading the target. Empty for a run stored before units were (schema 7)
    // whose target could not be found: shown with the unit read from the metric's name.
    QString metricUnit;
    double usd = 0;
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    qint64 llmCalls = 0;
    QStringList schedule; // menu items along the best trajectory, in order (set when the run ends)

    double speedup() const { return bestScore > 0 ? baselineScore / bestScore : 0; }
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::RunInfo)
