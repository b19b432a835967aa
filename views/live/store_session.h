#pragma once

#include "model/store_changes.h"

#include <QDateTime>
#include <QFuture>
#include <QHash>
#include <QObject>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace autocomp {

class RunStore;
class StoreFollower;

// The workbench's run store and all the work on it that leaves the GUI thread: the follower of what other
// processes commit (with each run's row and lease as it last read them), and the background jobs that check
// a store, import a run or measure KernelBench problems. Each job runs on the thread pool through a
// connection of its own (a connection cannot cross threads) and hands its result to a callback on the GUI
// thread; a callback never runs once the session is destroyed. Lives on the GUI thread.
class StoreSession : public QObject
{
    Q_OBJECT
public:
    explicit StoreSession(std::unique_ptr<RunStore> store, QObject *parent = nullptr);
    ~StoreSession() override;

    RunStore *store() const { return m_store.get(); }
    // Replaces the store; the follower starts over on the new one and what it read of the old one is forgotten.
    void replace(std::unique_ptr<RunStore> store);
    StoreFollower *follower() const { return m_follower; }
    // StoreFollower::follow and refresh.
    void follow(qint64 runId, const QDateTime &loadedAt, qint64 lastCandidateId);
    void refresh();

    // Every run the follower reported, as it last read it.
    const QHash<qint64, RunSnapshot> &snapshots() const { return m_snapshots; }
    // Who drives run `runId` as the store last showed it (none: no process holds its lease, or not read yet).
    std::optional<RunLease> driverOf(qint64 runId) const;

    // Opens the store at `path` with its checks (SQLite's quick_check, a schema upgrade: seconds for a big one)
    // off the GUI thread; `done` gets the error, empty when the store is sound (then it opens at once, unchecked).
    QFuture<QString> checkInBackground(const QString &path, std::function<void(const QString &error)> done);
    // Imports a JSONL run archive, or an Autocomp output directory, into this store in one transaction; `done`
    // gets the new run's id (0 on failure, with the error) and whether this session still has that store.
    QFuture<std::pair<qint64, QString>> importInBackground(
        const QString &path, std::function<void(qint64 runId, const QString &error, bool sameStore)> done);
    // `autocomp problems import`: KernelBench problem files under `paths` become kernelbench problems in the
    // user's data directory, each reference measured to pick its scale; `done` gets the report in words.
    QFuture<QString> importKernelBenchInBackground(const QStringList &paths,
                                                   std::function<void(const QString &report)> done);

Q_SIGNALS:
    // What other connections committed, once snapshots() holds it.
    void changed(const autocomp::StoreChanges &changes);
    void followFailed(const QString &error);

private:
    void startFollowing();

    std::unique_ptr<RunStore> m_store;
    StoreFollower *m_follower = nullptr;
    QHash<qint64, RunSnapshot> m_snapshots;
};

} // namespace autocomp
