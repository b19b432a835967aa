#pragma once

#include "model/run_info.h"
#include "study/study_config.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <cmath>
#include <limits>

namespace autocomp {

class RunStore;

// What a study's runs say, read from the store (the runs labelled with the study, StudyLabel): one row per
// run and one aggregate per problem × point, with the Pareto front of quality against cost.
struct StudyRunResult
{
    QString problem; // target/problem
    StudyPoint point;
    quint64 seed = 0;
    qint64 runId = 0; // 0: the run is not in the store yet
    QString state; // the store's display state (finished, running, interrupted...), "not started"
    QString stopReason; // the run's own words (first line)
    int iterations = 0; // iterations the run finished
    double baselineScore = std::numeric_limits<double>::quiet_NaN();
    double bestScore = std::numeric_limits<double>::quiet_NaN(); // NaN: no correct candidate
    // The best score found up to and including each iteration (index 0: the starting code); lower is better.
    QList<double> bestPerIteration;
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double usd = 0;
    qint64 llmCalls = 0;
    // Seconds from the run's creation to its last write: for a run resumed after a kill, the time the
    // study was down is included.
    double wallSeconds = 0;
    int verdicts = 0; // candidates (the start code left out) evaluated to a verdict: correct,
                      // incorrect, compile error, failed; not duplicates, cancelled or unfinished
    int correct = 0;
    // Distinct menu strategies of correct candidates that entered a beam (MenuInsights' enteredBeam).
    int beamStrategies = 0;

    double correctRate() const
    {
        return verdicts > 0 ? double(correct) / verdicts : std::numeric_limits<double>::quiet_NaN();
    }
    qint64 tokens() const { return tokensIn + tokensOut; }
    // Finished, failed, or stopped by its budget (resuming it would stop it again at once).
    bool ended() const
    {
        return state == QLatin1String("finished") || state == QLatin1String("failed")
            || (state == QLatin1String("stopped") && stopReason.startsWith(QLatin1String("budget:")));
    }
};

// A problem × point over its seeds: means over the runs that have a correct candidate (best score) or
// over all runs in the store (costs), sums of tokens and calls.
struct StudyPointSummary
{
    QString problem;
    StudyPoint point;
    int runs = 0; // in the store
    int ended = 0; // finished or failed
    int planned = 0; // seeds
    double meanBest = std::numeric_limits<double>::quiet_NaN();
    QList<double> meanBestPerIteration; // over the runs that reached the iteration with a score
    qint64 tokens = 0; // all runs together
    double usd = 0; // all runs together
    qint64 llmCalls = 0; // all runs together
    double meanUsd = 0; // per run
    double meanTokens = 0; // per run
    double meanWallSeconds = 0;
    double correctRate = std::numeric_limits<double>::quiet_NaN(); // pooled: correct / verdicts
    double meanBeamStrategies = 0;
    bool onFront = false; // on the Pareto front of its problem (quality: meanBest, cost: meanUsd or meanTokens)
};

// A point for the Pareto front: lower quality value is better (a latency), lower cost is better.
struct ParetoPoint
{
    double quality = 0;
    double cost = 0;
};

class StudyReport
{
public:
    // Indexes of the points on the Pareto front: those no other point is at least as good as in both and
    // better in one. Points with a NaN coordinate are never on it and never dominate. Equal points are all on it.
    static QList<int> paretoFront(const QList<ParetoPoint> &points);

    // The study's runs as the store has them: one result per planned run (the study's problems × points ×
    // seeds, in that order; runId 0 where the store has none yet).
    static QList<StudyRunResult> results(RunStore &store, const StudyConfig &study);
    // Every run labelled with `studyName` in the store, as results (for a view without the study file),
    // ordered by problem, point (as first seen) and seed.
    static QList<StudyRunResult> results(RunStore &store, const QString &studyName);
    // The runs labelled with `studyName`, by label (where a label occurs twice, the newest run).
    static QHash<QString, RunInfo> runsByLabel(RunStore &store, const QString &studyName);
    // Names of the studies with runs in the store, sorted.
    static QStringList studyNames(RunStore &store);

    // Aggregates per problem × point, in the order of the results, with the front marked per problem. Cost is
    // dollars, or tokens where every run of that problem cost $0 (local models, a price table without them).
    static QList<StudyPointSummary> summarize(const QList<StudyRunResult> &results);
    // Whether summarize() measured the cost of `problem`'s points in tokens (every run cost $0).
    static bool costInTokens(const QList<StudyRunResult> &results, const QString &problem);

    // RFC 4180 CSV with a header line. Runs: one row per planned run (study, problem, each varied key, seed,
    // run_id, state, stop_reason, iterations, baseline, best, speedup, best_per_iteration as 'a;b;c', tokens_in,
    // tokens_out, usd, llm_calls, wall_s, verdicts, correct, correct_rate, beam_strategies). Points: one row per
    // problem × point with the aggregates and on_front.
    static QString runsCsv(const QString &studyName, const QList<StudyRunResult> &results);
    static QString pointsCsv(const QString &studyName, const QList<StudyPointSummary> &points);
    // The per-point table the CLI prints (fixed-width columns).
    static QString pointsTable(const QList<StudyPointSummary> &points, const QList<StudyRunResult> &results);
};

} // namespace autocomp
