#pragma once

#include "model/candidate.h"
#include "model/run_info.h"
#include "model/store_changes.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QObject>

#include <functional>
#include <optional>

namespace autocomp {

class RunStore;
class StoreSession;

// The run the window shows: its row, its candidates, its beam, the selected candidate and who drives it. The
// one route from a run to the views: it is fed by the engine this process drives (RunController's batches,
// applyEngineCandidates and applyEngineBeam) and by the store another process writes (StoreSession::changed,
// which it follows itself), and the views that show candidates (the tree model, the graph, the chart, the
// diff, the inspector) subscribe to its signals through their setShownRun(). Lives on the GUI thread.
//
// Work in flight in a run that has ended (stopped, failed, finished) is handed out as cancelled: nothing will
// finish it until the run is resumed, which redoes it.
class ShownRun : public QObject
{
    Q_OBJECT
public:
    enum class Driver {
        Nobody, // no live process holds the run's lease
        ThisProcess, // an engine of this workbench (a RunController)
        OtherProcess, // another process, followed through the store
    };
    // Candidates another process committed are handed out this many per turn of the event loop.
    static constexpr int CandidatesPerTurn = 100;

    explicit ShownRun(StoreSession *session, QObject *parent = nullptr);

    // Whether this process's engine drives run `id` (RunActions::isDriving); unset: never.
    void setDrivenHere(std::function<bool(qint64 id)> drivenHere) { m_drivenHere = std::move(drivenHere); }

    const RunInfo &run() const { return m_run; }
    qint64 id() const { return m_run.id; }
    // The code's language for highlighting: the target's, else a guess from its name.
    const QString &language() const { return m_language; }
    RunStore *store() const;
    Driver driver() const;
    // The shown copy of candidate `id` of this run; null when it is not shown.
    const Candidate *find(qint64 id) const;
    // The shown copy, else the store's (a candidate of another run); none for 0 or an unknown id.
    std::optional<Candidate> lookup(qint64 id) const;
    // The run's starting point: a candidate without parent, of origin root when there is one.
    qint64 rootCandidateId() const;
    int candidateCount() const { return int(m_candidates.size()); }
    qint64 selectedId() const { return m_selected; }
    // When the run's candidates were read (rows written since then come through the follower).
    const QDateTime &loadedAt() const { return m_loadedAt; }
    // Work of the run in flight as the store shows it (for a run another process drives).
    int requestsInFlight() const { return m_requestsInFlight; }
    int evaluationsInFlight() const { return m_evaluationsInFlight; }

    // Reads run `runId` and its candidates from the store and shows them (shown()); false when the run is gone.
    bool show(qint64 runId);
    // Shows no run (shown() with none).
    void clear();
    // Forgets the run without telling the views: the run is gone and show() or clear() follows.
    void forget();
    // The shown run's row as stored now (same id; another id is ignored): runChanged(), and work in flight
    // of a run that has ended is settled (read again, else cancelled).
    void updateRun(const RunInfo &run);
    // Selects candidate `id` (0: none): candidateSelected() with its shown copy, or selectionCleared().
    void select(qint64 id);

    // A batch from this process's engine (RunController::candidatesChanged); another run's is ignored.
    void applyEngineCandidates(qint64 runId, const QList<Candidate> &candidates);
    // A new beam (RunController::beamChanged): the candidates that enter or leave it change.
    void applyEngineBeam(qint64 runId, const QList<qint64> &beam);

Q_SIGNALS:
    // Another run is shown (id() 0: none); `candidates` are all of it.
    void shown(const QList<autocomp::Candidate> &candidates);
    // New or changed candidates, latest version of each; `added`: some were not shown before.
    void candidatesChanged(const QList<autocomp::Candidate> &candidates, bool added);
    void runChanged();
    // The selected candidate, again whenever it changed (its row, its LLM calls, its evaluation).
    void candidateSelected(const autocomp::Candidate &candidate);
    void selectionCleared();

private:
    void storeChanged(const StoreChanges &changes);
    bool drivenHere() const { return m_drivenHere && m_drivenHere(m_run.id); }
    void apply(const QList<Candidate> &unsettled);
    void applyBacklog();
    QList<Candidate> settled(QList<Candidate> candidates) const;
    void settleInFlight();

    StoreSession *m_session;
    std::function<bool(qint64)> m_drivenHere;
    RunInfo m_run;
    QString m_language;
    QHash<qint64, Candidate> m_candidates;
    qint64 m_selected = 0;
    QList<Candidate> m_backlog; // committed by another process, not handed out yet
    QDateTime m_loadedAt;
    int m_requestsInFlight = 0;
    int m_evaluationsInFlight = 0;
};

} // namespace autocomp
