#pragma once

#include "model/run_info.h"
#include "store/run_store.h"

#include <QJsonObject>
#include <QTextStream>

#include <functional>
#include <memory>

// The CLI's side of reliability: how each command opens the store, the exit status of a run, stop/pause
// of a run driven by another process, and what `runs show` says about leases and unconfirmed costs.
namespace autocomp {
class SearchEngine;
}

namespace autocomp::cli {

// Exit statuses (README, autocomp(1)).
enum RunExit { RunExitFinished = 0, RunExitFailed = 3, RunExitStopped = 4 };

// Create: `run` may create the store and its folders. Import: may create the store file in an existing
// folder. Write: the store must exist and be writable (resume, stop, pause). Read: the store must exist; a store that
// cannot be written is opened read-only with a note on `err` (runs, export).
enum class StoreUse { Create, Import, Write, Read };
std::unique_ptr<RunStore> openStore(const QString &path, StoreUse use, QTextStream &err);

// 0 finished (with at least one evaluated candidate: the engine marks a run with none as failed),
// 3 failed, 4 stopped or paused.
int runExitCode(const RunInfo &run);

// `autocomp stop|pause RUN_ID`: asks the process driving the run and returns as soon as the run has
// ended (or paused); a run nobody drives (paused, interrupted) gets its state recorded directly.
int controlRun(RunStore &store, qint64 runId, const QString &command, QTextStream &out, QTextStream &err);

// While it lives, SIGINT and SIGTERM call `stop` with the reason ("stopped by SIGTERM"), which stops the
// runs cleanly (they end stopped, in-flight work is redone on resume). The handler only writes a byte to a
// pipe; `stop` runs on the event loop.
class StopOnSignals
{
public:
    explicit StopOnSignals(std::function<void(const QString &reason)> stop);
    ~StopOnSignals();
    StopOnSignals(const StopOnSignals &) = delete;
    StopOnSignals &operator=(const StopOnSignals &) = delete;

private:
    struct Private;
    std::unique_ptr<Private> d;
};

// Who drives the run and the requests whose cost is unconfirmed (sent, answer never recorded).
void printRunNotes(RunStore &store, const RunInfo &run, QTextStream &out);
QJsonObject runNotesJson(RunStore &store, const RunInfo &run);

} // namespace autocomp::cli
