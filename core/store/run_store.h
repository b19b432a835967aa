#pragma once

#include "model/candidate.h"
#include "model/eval_result.h"
#include "model/llm_call.h"
#include "model/run_info.h"

#include <QList>
#include <QSqlQuery>
#include <QString>

#include <unordered_map>

#include <memory>
#include <optional>

namespace autocomp {

// The run store: one SQLite database (WAL) holding runs, candidates, LLM calls and evaluation steps.
// One instance owns one connection and must be used from the thread that opened it; open another
// instance per thread (WAL lets readers proceed while the engine writes).
class RunStore
{
public:
    static constexpr int SchemaVersion = 2;

    ~RunStore();
    RunStore(const RunStore &) = delete;
    RunStore &operator=(const RunStore &) = delete;

    // Opens or creates the database. Never overwrites a file that is not a store of ours, is corrupt,
    // or has a newer schema: returns null and a message naming the file instead.
    static std::unique_ptr<RunStore> open(const QString &path, QString *error);
    // AUTOCOMP_STORE, else $XDG_DATA_HOME/autocomp-workbench/runs.sqlite.
    static QString defaultPath();

    QString path() const { return m_path; }
    QString lastError() const { return m_lastError; }

    // Groups the writes until the matching endBatch() into one transaction, so a burst of writes costs one
    // commit and becomes visible (and durable) at once. Batches nest (inner ones are savepoints); endBatch(false)
    // undoes only the innermost batch. Commits when the outermost batch ends.
    bool beginBatch();
    bool endBatch(bool ok = true);
    class Batch
    {
    public:
        explicit Batch(RunStore &store) : m_store(store) { m_store.beginBatch(); }
        ~Batch() { m_store.endBatch(true); }
        Batch(const Batch &) = delete;
        Batch &operator=(const Batch &) = delete;

    private:
        RunStore &m_store;
    };

    // Writes: each in its own transaction (or the enclosing batch). Return false (and set lastError) on failure.
    qint64 createRun(const RunInfo &run);
    bool updateRun(const RunInfo &run);
    bool deleteRun(qint64 runId);
    qint64 addCandidate(const Candidate &candidate);
    bool updateCandidate(const Candidate &candidate);
    bool setBeam(qint64 runId, const QList<qint64> &candidateIds);
    qint64 addLlmCall(const LlmCall &call);
    bool addEvaluation(qint64 candidateId, const EvalResult &result);
    // Cross-process run control: another process (the CLI's pause/stop, the GUI) asks, the engine polls.
    bool requestState(qint64 runId, const QString &request); // pause | resume | stop | "" (clear)
    QString requestedState(qint64 runId);

    // Reads.
    QList<RunInfo> runs();
    std::optional<RunInfo> run(qint64 runId);
    QList<Candidate> candidates(qint64 runId);
    std::optional<Candidate> candidate(qint64 candidateId);
    QList<LlmCall> llmCalls(qint64 runId);
    QList<LlmCall> llmCallsForCandidate(qint64 candidateId);
    // A successful earlier response for the same request hash (any run), for resume and caching.
    std::optional<LlmCall> cachedResponse(const QString &requestHash);
    QList<StepResult> evaluationSteps(qint64 candidateId);

    // LLM usage of a run per provider::model (paid calls only; answers reused from the cache cost nothing).
    struct ModelUsage {
        QString model; // provider::model
        qint64 calls = 0;
        qint64 failed = 0;
        qint64 tokensIn = 0;
        qint64 tokensOut = 0;
        double usd = 0;
        double latencyMs = 0; // total
    };
    QList<ModelUsage> usageByModel(qint64 runId);

private:
    RunStore() = default;
    bool migrate(QString *error);
    bool exec(const QString &sql);
    QSqlQuery &query(const QString &sql);

    QString m_path;
    QString m_connectionName;
    QString m_lastError;
    std::unordered_map<QString, std::unique_ptr<QSqlQuery>> m_queries;
    int m_batchDepth = 0;
};

} // namespace autocomp
