#include "store/store_follower.h"

#include "store/run_store.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHash>
#include <QThread>
#include <QTimer>

namespace autocomp {

namespace {

bool sameLease(const std::optional<RunLease> &a, const std::optional<RunLease> &b)
{
    if (a.has_value() != b.has_value())
        return false;
    return !a
        || (a->pid == b->pid && a->host == b->host && a->alive == b->alive && a->takesRequests == b->takesRequests);
}

// Code waits for or is under evaluation: the store records pending until the verdict (the steps between are
// not stored, but a row written meanwhile may carry them).
bool inEvaluation(CandidateStatus status)
{
    return status == CandidateStatus::Pending || status == CandidateStatus::Compiling
        || status == CandidateStatus::Testing || status == CandidateStatus::Benchmarking;
}

} // namespace

class StoreFollower::Worker : public QObject
{
public:
    Worker(StoreFollower *owner, const QString &path) : m_owner(owner), m_path(path) {}

    void start()
    {
        QString error;
        // A read-only store is followed too; it was checked when the window opened it.
        m_store = RunStore::open(m_path, {.create = false, .allowReadOnly = true, .check = false}, &error);
        if (!m_store) {
            Q_EMIT m_owner->failed(error);
            return;
        }
        m_watcher = new QFileSystemWatcher(this);
        connect(m_watcher, &QFileSystemWatcher::fileChanged, this, [this] {
            if (!m_soon->isActive())
                m_soon->start();
        });
        m_soon = new QTimer(this);
        m_soon->setSingleShot(true);
        m_soon->setInterval(CoalesceMs);
        connect(m_soon, &QTimer::timeout, this, [this] { look(false); });
        m_poll = new QTimer(this);
        m_poll->setInterval(PollIntervalMs);
        connect(m_poll, &QTimer::timeout, this, [this] {
            watchFiles();
            look(false);
        });
        watchFiles();
        m_leaseClock.start();
        m_poll->start();
        look(true);
    }

    void follow(qint64 runId, const QDateTime &loadedAt, qint64 lastCandidateId)
    {
        m_followed = runId;
        m_mark = loadedAt.isValid() ? loadedAt.addSecs(-2).toUTC().toString(Qt::ISODateWithMs) : QString();
        m_atMark.clear();
        m_lastCandidateId = lastCandidateId;
        m_openCalls.clear();
        m_lastCallId = 0;
        m_lastStepId = 0;
        m_requests = -1;
        m_evaluations = -1;
        if (!m_store || runId == 0)
            return;
        for (const RunStore::CallStamp &call : m_store->callStamps(runId, 0)) {
            m_lastCallId = std::max(m_lastCallId, call.id);
            if (call.status == QLatin1String("in_flight"))
                m_openCalls.insert(call.id);
        }
        m_lastStepId = m_store->lastEvaluationStepId();
        m_evaluating.clear();
        for (qint64 id : m_store->candidatesInEvaluation(runId))
            m_evaluating.insert(id);
        look(true);
    }

    void look(bool forced)
    {
        if (!m_store)
            return;
        const std::optional<qint64> version = m_store->dataVersion();
        const bool committed = !version || !m_version || *version != *m_version;
        m_version = version;
        const bool leaseCheck = m_leaseClock.elapsed() >= LeaseCheckIntervalMs;
        if (!committed && !forced && !leaseCheck)
            return;
        if (leaseCheck)
            m_leaseClock.restart();

        StoreChanges changes;
        changes.followedRunId = m_followed;
        QHash<qint64, RunStore::RunStamp> now;
        for (const RunStore::RunStamp &stamp : m_store->runStamps()) {
            now.insert(stamp.id, stamp);
            const auto known = m_runs.constFind(stamp.id);
            const bool changed = known == m_runs.constEnd() || known->updatedAt != stamp.updatedAt
                || known->state != stamp.state || !sameLease(known->lease, stamp.lease);
            if (!changed)
                continue;
            if (const std::optional<RunInfo> run = m_store->run(stamp.id))
                changes.runs << RunSnapshot{*run, stamp.lease};
        }
        for (auto it = m_runs.cbegin(); it != m_runs.cend(); ++it)
            if (!now.contains(it.key()))
                changes.removedRuns << it.key();
        m_runs = std::move(now);
        if (changes.removedRuns.contains(m_followed))
            m_followed = 0;
        if (m_followed != 0 && (committed || forced)) {
            readFollowed(changes);
        } else {
            // Nothing committed: the work in flight is as last read.
            changes.requestsInFlight = std::max(0, m_requests);
            changes.evaluationsInFlight = std::max(0, m_evaluations);
        }
        if (committed || forced)
            readRequests(changes);
        const bool countsChanged = m_followed != 0
            && (changes.requestsInFlight != m_requests || changes.evaluationsInFlight != m_evaluations);
        if (changes.isEmpty() && !countsChanged && !forced)
            return;
        if (m_followed != 0) {
            m_requests = changes.requestsInFlight;
            m_evaluations = changes.evaluationsInFlight;
        }
        Q_EMIT m_owner->changed(changes);
    }

    void stop()
    {
        delete m_watcher;
        m_watcher = nullptr;
        m_store.reset();
    }

private:
    void watchFiles()
    {
        // The -wal file comes and goes with checkpoints and the last connection; watched whenever it exists.
        for (const QString &file : QStringList{m_path, m_path + QStringLiteral("-wal")})
            if (!m_watcher->files().contains(file) && QFileInfo::exists(file))
                m_watcher->addPath(file);
    }

    // Plans and edits handed to drivers: new ones, and those that were pending and have been taken or refused.
    // The first read only notes which are pending.
    void readRequests(StoreChanges &changes)
    {
        const qint64 from = m_openRequests.isEmpty()
            ? m_lastRequestId + 1
            : std::min(m_lastRequestId + 1, *std::min_element(m_openRequests.cbegin(), m_openRequests.cend()));
        for (const RunRequest &request : m_store->runRequests(from)) {
            const bool isNew = request.id > m_lastRequestId;
            const bool settled = !isNew && m_openRequests.contains(request.id) && !request.isPending();
            m_lastRequestId = std::max(m_lastRequestId, request.id);
            if (request.isPending())
                m_openRequests.insert(request.id);
            else
                m_openRequests.remove(request.id);
            if ((isNew || settled) && m_requestsRead)
                changes.requests << request;
        }
        m_requestsRead = true;
    }

    void readFollowed(StoreChanges &changes)
    {
        const qint64 run = m_followed;
        // Rows written in the mark's own millisecond are read again (a row may be rewritten within it) only while a
        // writer may still be in that millisecond; an import or a bulk write leaves thousands of rows with one
        // timestamp, read again on every commit to the store otherwise.
        QString since = m_mark;
        if (const QDateTime at = QDateTime::fromString(m_mark, Qt::ISODateWithMs);
            at.isValid() && at.msecsTo(QDateTime::currentDateTimeUtc()) > SettledMarkMs)
            since = at.addMSecs(1).toUTC().toString(Qt::ISODateWithMs);
        const CandidateRows rows = m_store->candidatesSince(run, since, m_lastCandidateId);
        QString mark = m_mark;
        for (qsizetype i = 0; i < rows.candidates.size(); ++i) {
            const Candidate &c = rows.candidates.at(i);
            const QString &at = rows.updatedAt.at(i);
            m_lastCandidateId = std::max(m_lastCandidateId, c.id);
            if (inEvaluation(c.status))
                m_evaluating.insert(c.id);
            else
                m_evaluating.remove(c.id);
            // Rows written in the mark's own millisecond come back each time: sent again only when they differ.
            if (at == m_mark) {
                const auto seen = m_atMark.constFind(c.id);
                if (seen != m_atMark.constEnd() && seen->sameContent(c))
                    continue;
            }
            changes.candidates << c;
            if (at > mark)
                mark = at;
        }
        if (mark != m_mark)
            m_atMark.clear();
        for (qsizetype i = 0; i < rows.candidates.size(); ++i)
            if (rows.updatedAt.at(i) == mark)
                m_atMark.insert(rows.candidates.at(i).id, rows.candidates.at(i));
        m_mark = mark;

        const qint64 from = m_openCalls.isEmpty()
            ? m_lastCallId + 1
            : std::min(m_lastCallId + 1, *std::min_element(m_openCalls.cbegin(), m_openCalls.cend()));
        for (const RunStore::CallStamp &call : m_store->callStamps(run, from)) {
            const bool inFlight = call.status == QLatin1String("in_flight");
            if (call.id > m_lastCallId) {
                m_lastCallId = call.id;
                changes.touchedCalls.insert(call.id);
                if (call.candidateId)
                    changes.touchedCandidates.insert(call.candidateId);
                if (inFlight)
                    m_openCalls.insert(call.id);
            } else if (m_openCalls.contains(call.id) && !inFlight) {
                m_openCalls.remove(call.id);
                changes.touchedCalls.insert(call.id);
                if (call.candidateId)
                    changes.touchedCandidates.insert(call.candidateId);
            }
        }
        for (const auto &[step, candidate] : m_store->evaluationStepsAfter(run, m_lastStepId)) {
            m_lastStepId = std::max(m_lastStepId, step);
            changes.touchedCandidates.insert(candidate);
        }
        changes.requestsInFlight = int(m_openCalls.size());
        changes.evaluationsInFlight = int(m_evaluating.size());
    }

    StoreFollower *m_owner;
    QString m_path;
    std::unique_ptr<RunStore> m_store;
    QFileSystemWatcher *m_watcher = nullptr;
    QTimer *m_soon = nullptr;
    QTimer *m_poll = nullptr;
    QElapsedTimer m_leaseClock;
    std::optional<qint64> m_version;
    QHash<qint64, RunStore::RunStamp> m_runs;

    qint64 m_followed = 0;
    QString m_mark; // the latest updated_at read of the followed run's candidates
    QHash<qint64, Candidate> m_atMark; // the rows written at the mark, as sent
    qint64 m_lastCandidateId = 0;
    qint64 m_lastCallId = 0;
    QSet<qint64> m_openCalls; // calls seen in flight, whose outcome is still to come
    QSet<qint64> m_evaluating; // candidates waiting for or under evaluation, kept from the rows read
    qint64 m_lastStepId = 0;
    int m_requests = -1;
    int m_evaluations = -1;
    qint64 m_lastRequestId = 0;
    QSet<qint64> m_openRequests; // run requests seen pending
    bool m_requestsRead = false;
};

StoreFollower::StoreFollower(const QString &path, QObject *parent)
    : QObject(parent)
    , m_path(path)
    , m_thread(new QThread(this))
    , m_worker(new Worker(this, path))
{
    qRegisterMetaType<StoreChanges>();
    m_thread->setObjectName(QStringLiteral("store follower"));
    m_worker->moveToThread(m_thread);
    m_thread->start();
    QMetaObject::invokeMethod(m_worker, [worker = m_worker] { worker->start(); });
}

StoreFollower::~StoreFollower()
{
    // Its connection is closed on the thread that opened it.
    Worker *worker = m_worker;
    QMetaObject::invokeMethod(
        worker,
        [worker] {
            worker->stop();
            delete worker;
        },
        Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
}

void StoreFollower::follow(qint64 runId, const QDateTime &loadedAt, qint64 lastCandidateId)
{
    QMetaObject::invokeMethod(m_worker, [worker = m_worker, runId, loadedAt, lastCandidateId] {
        worker->follow(runId, loadedAt, lastCandidateId);
    });
}

void StoreFollower::refresh()
{
    QMetaObject::invokeMethod(m_worker, [worker = m_worker] { worker->look(true); });
}

} // namespace autocomp
