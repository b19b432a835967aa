#pragma once

#include "model/candidate.h"
#include "model/run_info.h"
#include "model/run_lease.h"
#include "model/run_request.h"

#include <QHash>
#include <QList>
#include <QMetaType>
#include <QSet>
#include <QString>

#include <optional>

namespace autocomp {

// One run as another process left it: its row and who drives it.
struct RunSnapshot
{
    RunInfo run;
    std::optional<RunLease> lease; // none: no process holds the lease
    // Recorded as running, but the process that drove it is gone (killed, crashed): shown as "interrupted".
    bool interrupted() const { return run.state == RunState::Running && !(lease && lease->alive); }
};

// Candidate rows of a run written since a mark, with the time each row was last written (as stored).
struct CandidateRows
{
    QList<Candidate> candidates;
    QStringList updatedAt; // one per candidate
};

// What other connections committed to a store since StoreFollower last looked: new or changed runs (their
// rows, their drivers), deleted runs, and for the followed run its new or changed candidates and the
// candidates that got new LLM calls or evaluation steps.
struct StoreChanges
{
    QList<RunSnapshot> runs;
    QList<qint64> removedRuns;

    qint64 followedRunId = 0;
    QList<Candidate> candidates; // of the followed run, latest version of each, in id order
    QSet<qint64> touchedCandidates; // their LLM calls or evaluation steps changed (the inspector's content)
    QSet<qint64> touchedCalls; // LLM calls of the followed run that are new or were completed
    int requestsInFlight = 0; // of the followed run
    int evaluationsInFlight = 0; // of the followed run: candidates waiting for or under evaluation

    QList<RunRequest> requests; // of any run: new, or taken or refused since last read

    bool isEmpty() const
    {
        return runs.isEmpty() && removedRuns.isEmpty() && candidates.isEmpty() && touchedCandidates.isEmpty()
            && touchedCalls.isEmpty() && requests.isEmpty();
    }
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::RunSnapshot)
Q_DECLARE_METATYPE(autocomp::StoreChanges)
