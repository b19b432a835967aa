#pragma once

#include "model/store_changes.h"

#include <QDateTime>
#include <QObject>
#include <QString>

class QThread;

namespace autocomp {

// Follows a store that other processes write (an `autocomp run` in a terminal, another workbench): notices
// their commits and reads only what is new. It looks when SQLite's data_version says another connection
// committed; it looks at once when the store or its write-ahead log changes on disk (a file watch), and
// every PollIntervalMs in any case (file watches miss writes from other machines on a shared file system).
// Whether a run's driving process is still alive is checked every LeaseCheckIntervalMs, as a killed
// process commits nothing.
//
// It reads through a connection of its own on a thread of its own; changes arrive as StoreChanges through
// changed(), queued to the owner's thread.
class StoreFollower : public QObject
{
    Q_OBJECT
public:
    static constexpr int PollIntervalMs = 250;
    static constexpr int LeaseCheckIntervalMs = 2000;
    // Bursts of file changes are read together, this long after the first.
    static constexpr int CoalesceMs = 15;
    // No writer commits a row stamped this long ago: rows written at an older mark are not read again.
    static constexpr int SettledMarkMs = 2000;

    explicit StoreFollower(const QString &path, QObject *parent = nullptr);
    ~StoreFollower() override;

    QString path() const { return m_path; }
    // Follows the candidates, LLM calls and evaluations of `runId` (0: none) from now on. The caller read the
    // run's candidates at `loadedAt` (those written since then are sent again) up to id `lastCandidateId`.
    void follow(qint64 runId, const QDateTime &loadedAt, qint64 lastCandidateId);
    // Looks now, as if a commit had been noticed.
    void refresh();

Q_SIGNALS:
    // The first look after start reports every run of the store.
    void changed(const autocomp::StoreChanges &changes);
    void failed(const QString &error);

private:
    class Worker;
    QString m_path;
    QThread *m_thread;
    Worker *m_worker;
};

} // namespace autocomp
