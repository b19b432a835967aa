#pragma once

#include "model/candidate.h"
#include "catalog/repository.h"
#include "secrets/secret_store.h"
#include "model/run_info.h"
#include "search/search_engine.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>

class QThread;
class QTimer;

namespace autocomp {

class EngineHost;

// Drives one run: its SearchEngine lives on the EngineHost's thread (with the engines of the other runs
// of the window) and its news is brought to the GUI thread. Calls into the engine are queued invocations;
// the engine's signals arrive queued and are coalesced: candidates are collected and handed out in one
// batch per ~50 ms, so a burst of events costs one model update. Several controllers run several runs.
class RunController : public QObject
{
    Q_OBJECT
public:
    // What the status bar shows; all of it is read on the GUI thread.
    struct Status
    {
        qint64 runId = 0;
        RunState state = RunState::Created;
        QString reason;
        int iteration = 0;
        int iterations = 0;
        int inFlightRequests = 0;
        int inFlightEvaluations = 0;
        qint64 tokensIn = 0;
        qint64 tokensOut = 0;
        double usd = 0;
        qint64 calls = 0;
        std::optional<double> maxUsd;
        qint64 elapsedMs = 0;
    };

    // `host`: the search thread shared with other controllers; none: a host of its own.
    explicit RunController(QObject *parent = nullptr, EngineHost *host = nullptr);
    // Stops a running engine (the run stays resumable) and joins the thread.
    ~RunController() override;

    // The data the GUI resolves runs against. Agent copies in the user's data dir come first, so an agent
    // edited in the workbench is the one its next run uses, even when AUTOCOMP_DATA_DIR is set.
    static Repository workbenchRepository();
    Repository repository() const { return m_repository; }
    void setRepository(const Repository &repository) { m_repository = repository; }

    // True while this controller's engine exists (running or paused).
    bool isActive() const { return m_engine != nullptr || m_launching; }
    bool isActive(qint64 runId) const { return m_engine && m_status.runId == runId; }
    qint64 runId() const { return m_status.runId; }
    Status status() const;

    // Asynchronous: started() or startFailed() follows.
    bool start(const RunSetup &setup, QString *error);
    bool resume(qint64 runId, const RunSetup &setup, QString *error);
    void pause();
    void resumeWork();
    void stop(const QString &reason = QStringLiteral("stopped by the user"));
    // Asynchronous: humanCandidateAdded() or humanInputFailed() follows.
    void addHumanPlan(qint64 parentId, const QString &plan);
    void addHumanCode(qint64 parentId, const QString &code);

    static constexpr int BatchIntervalMs = 50;

Q_SIGNALS:
    void started(qint64 runId);
    void startFailed(const QString &error);
    void stateChanged(autocomp::RunState state, const QString &reason);
    // One batch of added or changed candidates of run `runId`, latest version of each, in arrival order.
    void candidatesChanged(qint64 runId, const QList<autocomp::Candidate> &candidates);
    void beamChanged(qint64 runId, const QList<qint64> &beam);
    void iterationFinished(qint64 runId, int iteration);
    void statusChanged();
    void logMessage(const QString &message);
    void humanCandidateAdded(qint64 candidateId);
    void humanInputFailed(const QString &error);
    void finished(const autocomp::RunInfo &run);

private:
    bool launch(const RunSetup &setup, qint64 resumeRunId, QString *error);
    void launchEngine(const RunSetup &setup, qint64 resumeRunId);
    void onEngine(std::function<void(SearchEngine *)> work);
    void connectEngine();
    void queueCandidate(const Candidate &candidate);
    void flush();
    void pollInFlight();
    void engineFinished(const RunInfo &run);
    void destroyEngine();

    Repository m_repository;
    EngineHost *m_host;
    SearchEngine *m_engine = nullptr; // lives on the host's thread, owned by its RunManager
    bool m_launching = false; // waiting for the keychain before the engine is made
    QTimer *m_flushTimer;
    QTimer *m_pollTimer;
    QList<Candidate> m_pending;
    QHash<qint64, int> m_pendingIndex; // candidate id -> position in m_pending
    Status m_status;
    QElapsedTimer m_clock;
    qint64 m_elapsedBefore = 0;
    QString m_takenOverBy; // the process that took the run's lease over from this one (then the engine ends)
};

} // namespace autocomp
