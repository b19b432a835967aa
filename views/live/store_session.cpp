#include "live/store_session.h"

#include "catalog/kernelbench_import.h"
#include "catalog/repository.h"
#include "exchange/autocomp_dir.h"
#include "exchange/run_archive.h"
#include "store/run_store.h"
#include "store/store_follower.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

namespace autocomp {

namespace {

// Calls `done` with the future's result on the GUI thread, through a watcher the session owns (so never after
// the session is gone).
template<typename T, typename Done>
QFuture<T> whenFinished(QObject *owner, QFuture<T> future, Done done)
{
    auto *watcher = new QFutureWatcher<T>(owner);
    QObject::connect(watcher, &QFutureWatcher<T>::finished, owner, [watcher, done = std::move(done)] {
        watcher->deleteLater();
        done(watcher->result());
    });
    watcher->setFuture(future);
    return future;
}

QString kernelBenchReport(const QStringList &paths)
{
    QStringList notFound;
    const QStringList files = kernelBenchFiles(paths, &notFound);
    if (files.isEmpty())
        return StoreSession::tr("No KernelBench problem files (class Model, get_inputs, get_init_inputs) under %1.")
            .arg(paths.join(QLatin1String(", ")));
    QString error;
    const QList<KernelBenchImported> imported = importKernelBench(Repository(), files, {}, {}, &error);
    QStringList made, skipped;
    for (const KernelBenchImported &item : imported) {
        if (item.error.isEmpty())
            made << StoreSession::tr("%1 (scale %2)").arg(item.id).arg(item.scale, 0, 'g', 4);
        else
            skipped << item.error;
    }
    QString text = made.isEmpty() ? StoreSession::tr("No problem was imported.")
                                  : StoreSession::tr("Imported for target kernelbench:\n%1").arg(made.join(u'\n'));
    if (!skipped.isEmpty())
        text += StoreSession::tr("\n\nSkipped:\n%1").arg(skipped.join(u'\n'));
    if (!error.isEmpty())
        text += QStringLiteral("\n\n") + error;
    return text;
}

} // namespace

StoreSession::StoreSession(std::unique_ptr<RunStore> store, QObject *parent)
    : QObject(parent)
    , m_store(std::move(store))
{
    Q_ASSERT(m_store);
    setObjectName(QStringLiteral("storeSession"));
    startFollowing();
}

StoreSession::~StoreSession() = default;

void StoreSession::replace(std::unique_ptr<RunStore> store)
{
    Q_ASSERT(store);
    m_store = std::move(store);
    m_snapshots.clear();
    startFollowing();
}

void StoreSession::startFollowing()
{
    delete m_follower;
    m_follower = new StoreFollower(m_store->path(), this);
    connect(m_follower, &StoreFollower::changed, this, [this](const StoreChanges &changes) {
        for (const RunSnapshot &snapshot : changes.runs)
            m_snapshots.insert(snapshot.run.id, snapshot);
        for (qint64 id : changes.removedRuns)
            m_snapshots.remove(id);
        Q_EMIT changed(changes);
    });
    connect(m_follower, &StoreFollower::failed, this, &StoreSession::followFailed);
}

void StoreSession::follow(qint64 runId, const QDateTime &loadedAt, qint64 lastCandidateId)
{
    m_follower->follow(runId, loadedAt, lastCandidateId);
}

void StoreSession::refresh() { m_follower->refresh(); }

std::optional<RunLease> StoreSession::driverOf(qint64 runId) const
{
    const auto it = m_snapshots.constFind(runId);
    return it == m_snapshots.constEnd() ? std::nullopt : it->lease;
}

QFuture<QString> StoreSession::checkInBackground(const QString &path, std::function<void(const QString &)> done)
{
    return whenFinished(this, QtConcurrent::run([path] {
                            QString error;
                            return RunStore::open(path, {.create = false}, &error) ? QString() : error;
                        }),
                        std::move(done));
}

QFuture<std::pair<qint64, QString>> StoreSession::importInBackground(
    const QString &path, std::function<void(qint64, const QString &, bool)> done)
{
    // Parsing and writing a large archive is CPU and disk work; SQLite in WAL mode lets this connection write
    // while the GUI's reads.
    const QString storePath = m_store->path();
    auto import = [storePath, path] {
        QString error;
        std::unique_ptr<RunStore> store = RunStore::open(storePath, &error);
        if (!store)
            return std::make_pair(qint64(0), error);
        const qint64 runId = QFileInfo(path).isDir() ? importAutocompDir(*store, path, &error)
                                                     : importRunJsonl(*store, path, &error);
        return std::make_pair(runId, error);
    };
    return whenFinished(this, QtConcurrent::run(import),
                        [this, storePath, done = std::move(done)](const std::pair<qint64, QString> &result) {
                            done(result.first, result.second, m_store->path() == storePath);
                        });
}

QFuture<QString> StoreSession::importKernelBenchInBackground(const QStringList &paths,
                                                             std::function<void(const QString &)> done)
{
    return whenFinished(this, QtConcurrent::run([paths] { return kernelBenchReport(paths); }), std::move(done));
}

} // namespace autocomp
