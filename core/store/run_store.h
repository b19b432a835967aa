#pragma once

#include "model/candidate.h"
#include "model/eval_result.h"
#include "model/llm_call.h"
#include "model/run_lease.h"
#include "model/run_request.h"
#include "model/run_info.h"
#include "model/store_changes.h"

#include <QHash>
#include <QList>
#include <QSet>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <unordered_map>

namespace autocomp {

// The run store: one SQLite database (WAL) holding runs, candidates, LLM calls and evaluation steps.
// One instance owns one connection and must be used from the thread that opened it; open another
// instance per thread (WAL lets readers proceed while the engine writes).
// Its parts: run_store.cpp (opening, batches, writes and reads), run_store_leases.cpp (the run lease),
// run_store_follow.cpp (what followers read), store_migrations.cpp (the schema); store_sql.h maps rows to values.
class RunStore
{
public:
    static constexpr int SchemaVersion = 7;

    ~RunStore();
    RunStore(const RunStore &) = delete;
    RunStore &operator=(const RunStore &) = delete;

    // Opens or creates the database. Never overwrites a file that is not a store of ours, is corrupt,
    // or has a newer schema: returns null and a message naming the file instead.
    static std::unique_ptr<RunStore> open(const QString &path, QString *error);
    struct OpenOptions
    {
        // Create the file (and its folders) when missing; otherwise a missing store is an error.
        bool create = true;
        // With create: also make missing folders (otherwise a missing folder is an error).
        bool createFolders = true;
        // A store that cannot be written (file or folder permissions, a read-only file system) is opened
        // read-only for browsing and export, with readOnlyNote() saying why; otherwise that is an error.
        bool allowReadOnly = false;
        // Run SQLite's quick_check on an existing store (seconds on a big one). Off only for a store that
        // was just checked, e.g. by a background open whose connection cannot cross threads.
        bool check = true;
    };
    static std::unique_ptr<RunStore> open(const QString &path, const OpenOptions &options, QString *error);
    // AUTOCOMP_STORE, else $XDG_DATA_HOME/autocomp-workbench/runs.sqlite.
    static QString defaultPath();

    QString path() const { return m_path; }
    // The last failed write or read, classified: "disk full: PATH: ...", "read-only: ...", "I/O error: ...",
    // "permission denied: ...", "busy: ...", or SQLite's own words.
    QString lastError() const { return m_lastError; }
    bool isReadOnly() const { return m_readOnly; }
    // Why the store was opened read-only; empty when it is writable.
    QString readOnlyNote() const { return m_readOnlyNote; }

    // Groups the writes until the matching endBatch() into one transaction, so a burst of writes costs one
    // commit and becomes visible (and durable) at once. Batches nest (inner ones are savepoints); endBatch(false)
    // undoes only the innermost batch. Commits when the outermost batch ends.
    // A write that fails inside a batch dooms it: the outermost endBatch() then rolls everything back and
    // returns false, so a batch is stored whole or not at all.
    bool beginBatch();
    bool endBatch(bool ok = true);
    bool inBatch() const { return m_batchDepth > 0; }
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
    // Runs stored before their metric's unit was (schema 7) have none: each gets unitOf(run) (its target's
    // backend.yaml `unit:`, where the caller finds the target), unless that is empty. Not a change of the run: its
    // updated_at stays. False (lastError()) when the read or a write failed.
    bool fillMetricUnits(const std::function<QString(const RunInfo &)> &unitOf);
    qint64 addCandidate(const Candidate &candidate);
    bool updateCandidate(const Candidate &candidate);
    bool setBeam(qint64 runId, const QList<qint64> &candidateIds);
    qint64 addLlmCall(const LlmCall &call);
    bool addEvaluation(qint64 candidateId, const EvalResult &result);
    // Cross-process run control: another process (the CLI's pause/stop, the GUI) asks, the engine polls.
    bool requestState(qint64 runId, const QString &request); // pause | resume | stop | "" (clear)
    QString requestedState(qint64 runId);
    // Plans and edited code for the process that drives a run (see RunRequest). addRunRequest() records one from
    // this process, pending; the driver reads pendingRunRequests() and settles each: taken (candidateId) or
    // refused (reason). A request is settled once; settling one that is no longer pending returns false.
    qint64 addRunRequest(const RunRequest &request);
    QList<RunRequest> pendingRunRequests(qint64 runId);
    bool settleRunRequest(qint64 requestId, qint64 candidateId, const QString &reason);
    // Requests of every run from id `fromId` on (StoreFollower: new ones and those still pending).
    QList<RunRequest> runRequests(qint64 fromId);
    std::optional<RunRequest> runRequest(qint64 requestId);

    // Reads return what they found. A read that failed returns nothing (empty, 0 or nullopt) and is reported like
    // a failed write: lastError() says why, readFailed() is true until the next read, and an enclosing batch is
    // doomed. So "no calls" and "the calls could not be read" can be told apart.
    bool readFailed() const { return m_readFailed; }
    QList<RunInfo> runs();
    std::optional<RunInfo> run(qint64 runId);
    QList<Candidate> candidates(qint64 runId);
    std::optional<Candidate> candidate(qint64 candidateId);
    QList<LlmCall> llmCalls(qint64 runId);
    // One phase's calls only (plan | code | fix | translate | score).
    QList<LlmCall> llmCalls(qint64 runId, const QString &phase);
    QList<LlmCall> llmCallsForCandidate(qint64 candidateId);
    // A successful earlier response for the same request hash (any run), for resume and caching.
    std::optional<LlmCall> cachedResponse(const QString &requestHash);
    // The same, restricted to one run (runId > 0): answers are reused per run and position unless a run
    // asks for reuse across runs (llm.reuse_answers: across_runs).
    std::optional<LlmCall> cachedResponse(const QString &requestHash, qint64 runId);
    // Finishes a call recorded before it was sent (status "in_flight") with its outcome.
    bool completeLlmCall(const LlmCall &call);
    // Calls of a run that were sent but whose outcome never arrived (the process was killed or stopped while
    // they were in flight): the provider may have billed them. Their usd is an estimate.
    QList<LlmCall> unconfirmedCalls(qint64 runId);
    // Marks a run's calls left "in_flight" by a process that is gone as "unconfirmed".
    bool settleInFlightCalls(qint64 runId);

    // The run lease: one process drives a run. acquireLease() takes a free lease, or one whose owner is gone,
    // for this process; when another live process holds it, returns false with that holder in *holder.
    // From then on every write of that run through this store (the run, its candidates, LLM calls, evaluations,
    // beam, requests and their settling) checks in its own transaction that this process still holds the lease:
    // once another process has taken the run over, the write is refused (lastError says so, lostLease() says
    // who drives the run now) and the whole enclosing batch with it.
    bool acquireLease(qint64 runId, RunLease *holder);
    // Renews this process's lease; false when it no longer holds it (taken over) or the write failed.
    bool heartbeat(qint64 runId);
    bool releaseLease(qint64 runId);
    std::optional<RunLease> lease(qint64 runId);
    // Records the state of a run that no process drives (a pause or stop from the CLI or the workbench while
    // its driver is gone), with its reason; its calls left in flight become unconfirmed and its requests are
    // cleared. The lease is read again in the transaction that writes: when a live process drives the run by
    // then, nothing is written (TakenOver: ask that process instead). Failed: lastError() says why.
    enum class UndrivenWrite { Recorded, TakenOver, Failed };
    UndrivenWrite recordUndrivenState(qint64 runId, RunState state, const QString &reason, RunInfo *written = nullptr);
    // Whether this process still holds the lease it took; false with lostLease() set when another process took
    // the run over, or with lastError() when the store could not be read.
    bool checkLease(qint64 runId);
    // The lease as found when this process learned it had lost the run (a write refused, a heartbeat or
    // checkLease()): the process that drives it now (pid 0: none any more). nullopt while it holds the lease.
    std::optional<RunLease> lostLease(qint64 runId) const;
    // A run recorded as running whose driving process is gone (killed, crashed): shown as "interrupted".
    bool isInterrupted(const RunInfo &run);
    // The state to show: toString(run.state), or "interrupted" for a running run nobody drives.
    QString displayState(const RunInfo &run);
    QList<StepResult> evaluationSteps(qint64 candidateId);

    // For following a store that other processes write (StoreFollower, `autocomp runs watch`): cheap reads of
    // what changed. SQLite's data_version: changes whenever another connection commits to the store.
    std::optional<qint64> dataVersion();
    // Every run's last write and lease, without the rest of the row.
    struct RunStamp
    {
        qint64 id = 0;
        QString updatedAt; // as stored
        RunState state = RunState::Created;
        std::optional<RunLease> lease;
    };
    QList<RunStamp> runStamps();
    // Candidates of a run written at or after `since` (ISO text as stored; empty: all), or with an id above `afterId`.
    CandidateRows candidatesSince(qint64 runId, const QString &since, qint64 afterId);
    // LLM calls of a run from id `fromId` on: id, candidate, status.
    struct CallStamp
    {
        qint64 id = 0;
        qint64 candidateId = 0;
        QString status;
    };
    QList<CallStamp> callStamps(qint64 runId, qint64 fromId);
    // Evaluation steps of a run's candidates with an id above `afterId`: (step id, candidate id).
    QList<std::pair<qint64, qint64>> evaluationStepsAfter(qint64 runId, qint64 afterId);
    qint64 lastEvaluationStepId();
    // Work of a run in flight as the store shows it: requests sent without an answer yet, candidates whose code
    // waits for or is under evaluation (the store records pending until the verdict).
    int requestsInFlight(qint64 runId);
    QList<qint64> candidatesInEvaluation(qint64 runId);

    // LLM usage of a run per provider::model (paid calls only; answers reused from the cache cost nothing).
    struct ModelUsage
    {
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
    // The schema's checks and migrations, in store_migrations.cpp.
    bool migrate(QString *error);
    // The check and the migration, in one exclusive transaction (another process may be creating the same store).
    bool migrateExclusively(QString *error);
    // The lease columns of a run (pid 0 when nobody holds it or the run is gone); false when the read failed.
    bool readLease(qint64 runId, RunLease *lease);
    // A write of run `runId` (AnyDrivenRun: of whichever run it concerns, when the write does not say): where this
    // process took the run's lease, it runs in the enclosing batch or a transaction of its own, after checking that
    // the lease is still this process's.
    static constexpr qint64 AnyDrivenRun = -1;
    template<typename Write>
    auto leased(qint64 runId, Write write) -> decltype(write());
    bool stillLeased(qint64 runId);
    void leaseLost(qint64 runId, const RunLease &holder);
    // Records a failed statement: the classified message, and dooms the enclosing batch.
    void fail(const QSqlError &error);
    bool exec(const QString &sql);
    QSqlQuery &query(const QString &sql);
    // Every read runs here: the statement (prepared once per connection, as query() does) gets `binds` (":name",
    // value), each result row goes to `row`, then the statement is finished. A failed read is recorded by fail()
    // and returns false.
    using Binds = std::initializer_list<std::pair<const char *, QVariant>>;
    bool read(const QString &sql, Binds binds, const std::function<void(const QSqlQuery &)> &row);
    // The requests matching `condition` (SQL on run_requests binding :value), in id order.
    QList<RunRequest> requestsWhere(const QString &condition, qint64 value);

    QString m_path;
    QString m_connectionName;
    QString m_lastError;
    bool m_readFailed = false;
    std::unordered_map<QString, std::unique_ptr<QSqlQuery>> m_queries;
    int m_batchDepth = 0;
    bool m_batchFailed = false;
    int m_beginFailedDepth = 0; // the batch level whose BEGIN/SAVEPOINT failed, 0 when none
    bool doomed() const { return m_batchDepth > 0 && m_batchFailed; }
    // Runs whose lease this process took here, those it has lost since (with the holder found), and those whose
    // lease was checked in the current transaction.
    QSet<qint64> m_heldLeases;
    QHash<qint64, RunLease> m_lostLeases;
    QSet<qint64> m_leaseChecked;
    bool m_check = true;
    bool m_readOnly = false;
    QString m_readOnlyNote;
};

} // namespace autocomp
