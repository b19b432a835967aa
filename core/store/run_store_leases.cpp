#include "store/run_store.h"
#include "store/store_sql.h"

// The run lease: which process drives a run, and the checks that keep a process that lost it from writing.

namespace autocomp {

using namespace store_sql;

namespace {

// A lease's owner in a statement: the run (:id) and this process (:pid, :host).
void bindOwner(QSqlQuery &q, qint64 runId)
{
    q.bindValue(QStringLiteral(":id"), runId);
    q.bindValue(QStringLiteral(":pid"), ownPid());
    q.bindValue(QStringLiteral(":host"), hostName());
}

} // namespace

bool RunStore::readLease(qint64 runId, RunLease *lease)
{
    *lease = RunLease();
    return read(QStringLiteral("SELECT lease_pid, lease_host, lease_heartbeat, lease_inbox FROM runs WHERE id=:id"),
                {{":id", runId}}, [&](const QSqlQuery &q) {
                    lease->pid = q.value(0).toLongLong();
                    lease->host = q.value(1).toString();
                    lease->heartbeat = QDateTime::fromString(q.value(2).toString(), Qt::ISODateWithMs);
                    lease->takesRequests = q.value(3).toString() == inboxOf(lease->pid, lease->host);
                    lease->alive = leaseAlive(lease->pid, lease->host, lease->heartbeat);
                });
}

RunStore::UndrivenWrite RunStore::recordUndrivenState(qint64 runId, RunState state, const QString &reason,
                                                      RunInfo *written)
{
    if (!beginBatch())
        return UndrivenWrite::Failed;
    const std::optional<RunLease> holder = lease(runId);
    if (holder && holder->alive) {
        endBatch(false);
        return UndrivenWrite::TakenOver;
    }
    std::optional<RunInfo> run = this->run(runId);
    if (!run) {
        endBatch(false);
        if (m_lastError.isEmpty())
            m_lastError = QStringLiteral("run %1 is not in the store (deleted?)").arg(runId);
        return UndrivenWrite::Failed;
    }
    run->state = state;
    run->stopReason = reason;
    const bool ok = updateRun(*run) && settleInFlightCalls(runId) && requestState(runId, {});
    if (!endBatch(ok) || !ok)
        return UndrivenWrite::Failed;
    if (written)
        *written = *run;
    return UndrivenWrite::Recorded;
}

std::optional<RunLease> RunStore::lease(qint64 runId)
{
    RunLease l;
    if (!readLease(runId, &l) || !l.held())
        return std::nullopt;
    return l;
}

void RunStore::leaseLost(qint64 runId, const RunLease &holder)
{
    m_heldLeases.remove(runId);
    m_lostLeases.insert(runId, holder);
}

std::optional<RunLease> RunStore::lostLease(qint64 runId) const
{
    const auto it = m_lostLeases.constFind(runId);
    return it == m_lostLeases.cend() ? std::nullopt : std::optional<RunLease>(*it);
}

bool RunStore::checkLease(qint64 runId)
{
    if (m_lostLeases.contains(runId))
        return false;
    RunLease current;
    if (!readLease(runId, &current))
        return false;
    if (current.pid == ownPid() && current.host == hostName())
        return true;
    leaseLost(runId, current);
    return false;
}

bool RunStore::stillLeased(qint64 runId)
{
    const QList<qint64> runs = runId == AnyDrivenRun
        ? QList<qint64>(m_heldLeases.cbegin(), m_heldLeases.cend()) << m_lostLeases.keys()
        : QList<qint64>{runId};
    for (const qint64 run : runs) {
        if (m_leaseChecked.contains(run))
            continue;
        if (!m_lostLeases.contains(run)) {
            RunLease current;
            if (!readLease(run, &current))
                return false; // fail() has doomed the batch
            if (current.pid == ownPid() && current.host == hostName()) {
                m_leaseChecked.insert(run);
                continue;
            }
            leaseLost(run, current);
        }
        const RunLease holder = m_lostLeases.value(run);
        m_lastError = holder.held()
            ? QStringLiteral("run %1: this process no longer holds the run's lease: %2 drives it now")
                  .arg(run)
                  .arg(holder.describe())
            : QStringLiteral("run %1: this process no longer holds the run's lease (another process took it over)")
                  .arg(run);
        if (m_batchDepth > 0)
            m_batchFailed = true;
        return false;
    }
    return true;
}

bool RunStore::acquireLease(qint64 runId, RunLease *holder)
{
    // One transaction that takes the write lock first: two processes cannot both see the lease free.
    if (!beginBatch()) {
        endBatch(false);
        return false;
    }
    const auto current = lease(runId);
    if (current && current->alive && !(current->pid == ownPid() && current->host == hostName())) {
        if (holder)
            *holder = *current;
        m_lastError = QStringLiteral("run %1 is driven by another process: %2").arg(runId).arg(current->describe());
        endBatch(false);
        return false;
    }
    QSqlQuery &q = query(QStringLiteral(
        "UPDATE runs SET lease_pid=:pid, lease_host=:host, lease_heartbeat=:now, lease_inbox=:inbox WHERE id=:id"));
    bindOwner(q, runId);
    q.bindValue(QStringLiteral(":now"), now());
    q.bindValue(QStringLiteral(":inbox"), inboxOf(ownPid(), hostName()));
    if (!q.exec())
        fail(q.lastError());
    // Requests still pending were for a driver that ended before taking them: they are not taken by surprise now.
    if (!(current && current->isThisProcess())) {
        QSqlQuery &r = query(
            QStringLiteral("UPDATE run_requests SET state='refused', reason=:reason, handled_at=:now, driver_pid=:pid, "
                           "driver_host=:host WHERE run_id=:id AND state='pending'"));
        r.bindValue(QStringLiteral(":reason"),
                    current ? QStringLiteral("its driver (%1) ended before taking it").arg(current->describe())
                            : QStringLiteral("its driver ended before taking it"));
        r.bindValue(QStringLiteral(":now"), now());
        bindOwner(r, runId);
        if (!r.exec())
            fail(r.lastError());
    }
    if (!endBatch(true))
        return false;
    m_lostLeases.remove(runId);
    m_heldLeases.insert(runId);
    return true;
}

bool RunStore::heartbeat(qint64 runId)
{
    if (doomed())
        return false;
    QSqlQuery &q = query(
        QStringLiteral("UPDATE runs SET lease_heartbeat=:now WHERE id=:id AND lease_pid=:pid AND lease_host=:host"));
    q.bindValue(QStringLiteral(":now"), now());
    bindOwner(q, runId);
    if (!q.exec()) {
        fail(q.lastError());
        return false;
    }
    if (q.numRowsAffected() != 1) {
        RunLease current;
        if (readLease(runId, &current))
            leaseLost(runId, current);
        m_lastError = current.held()
            ? QStringLiteral("run %1: this process no longer holds the run's lease: %2 drives it now")
                  .arg(runId)
                  .arg(current.describe())
            : QStringLiteral("run %1: this process no longer holds the run's lease").arg(runId);
        return false;
    }
    return true;
}

bool RunStore::releaseLease(qint64 runId)
{
    if (doomed())
        return false;
    m_heldLeases.remove(runId);
    QSqlQuery &q = query(QStringLiteral("UPDATE runs SET lease_pid=0, lease_host='', lease_heartbeat='', "
                                        "lease_inbox='' WHERE id=:id AND lease_pid=:pid AND lease_host=:host"));
    bindOwner(q, runId);
    if (!q.exec()) {
        fail(q.lastError());
        return false;
    }
    return true;
}

bool RunStore::isInterrupted(const RunInfo &run)
{
    if (run.state != RunState::Running)
        return false;
    const auto l = lease(run.id);
    return !l || !l->alive;
}

QString RunStore::displayState(const RunInfo &run)
{
    return isInterrupted(run) ? QStringLiteral("interrupted") : toString(run.state);
}

} // namespace autocomp
