#pragma once

#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <optional>

namespace autocomp {

// One step of an evaluation as it ran (DESIGN.md §5).
struct StepResult
{
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

    // {"name", "command", "exit_code", "timed_out", "crashed", "output_flooded", "setup_failed", "duration_ms", "log"}:
    // the form of `autocomp eval --json`'s steps, a remote answer's and the JSONL archive's step lines.
    QJsonObject toJson() const;
    static StepResult fromJson(const QJsonObject &o);
};

// The verdict of an evaluation: a judge's result.json, `autocomp eval --json` (which a remote evaluation
// answers with) and the exports all have this one form, read and written only here.
struct EvalResult
{
    QString status; // one of statuses(), or "cancelled" (in this process only: never a verdict)
    bool correct = false;
    QJsonObject metrics;
    QStringList feedback;
    QStringList flags;
    QString log;
    QList<StepResult> steps;

    // Who wrote the JSON being read, which decides the statuses it may hold.
    enum class Source {
        Judge, // a judge's result.json: judgeStatuses() only
        Evaluation // a whole evaluation's (`autocomp eval --json`, a remote answer): statuses()
    };
    // What a judge may say: ok, compile_error, incorrect, timeout, crash, rejected.
    static QStringList judgeStatuses();
    // Every status an evaluation ends with: the judge's, then error (a problem of the machine, no verdict
    // about the code) and no_hardware (compiled, but the steps that need the target's hardware left out).
    static QStringList statuses();

    // The object as checked as a judge's result.json is: a status of `source`'s list, a boolean `correct`,
    // `metrics` an object, and with `metric` non-empty, that metric present when correct. nullopt and
    // *error (naming the key, without a file name) otherwise. `correct` holds only with status ok;
    // `steps` are read when present.
    static std::optional<EvalResult> fromJson(const QJsonObject &o, Source source, const QString &metric,
                                              QString *error);
    // status, correct, metrics, feedback, flags, log and steps.
    QJsonObject toJson() const;

    // The value of `metric` (median when it is a distribution object); NaN when absent.
    double metricValue(const QString &metric) const;
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::EvalResult)
