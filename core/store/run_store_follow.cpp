#include "store/run_store.h"
#include "store/store_sql.h"

// The cheap reads of what changed, for following a store that other processes write, and a run's usage.

namespace autocomp {

using namespace store_sql;

QList<RunStore::ModelUsage> RunStore::usageByModel(qint64 runId)
{
    QList<ModelUsage> out;
    read(QStringLiteral("SELECT provider || '::' || model, count(*), sum(status = 'error'), sum(tokens_in), "
                        "sum(tokens_out), sum(usd), sum(latency_ms) "
                        "FROM llm_calls WHERE run_id = :run AND status NOT IN ('cached', 'in_flight', 'unconfirmed') "
                        "GROUP BY provider, model ORDER BY sum(usd) DESC, count(*) DESC"),
         {{":run", runId}}, [&](const QSqlQuery &q) {
             out << ModelUsage{q.value(0).toString(),   q.value(1).toLongLong(), q.value(2).toLongLong(),
                               q.value(3).toLongLong(), q.value(4).toLongLong(), q.value(5).toDouble(),
                               q.value(6).toDouble()};
         });
    return out;
}

std::optional<qint64> RunStore::dataVersion()
{
    std::optional<qint64> version;
    read(QStringLiteral("PRAGMA data_version"), {}, [&](const QSqlQuery &q) { version = q.value(0).toLongLong(); });
    return version;
}

QList<RunStore::RunStamp> RunStore::runStamps()
{
    QList<RunStamp> out;
    read(QStringLiteral("SELECT id, updated_at, state, lease_pid, lease_host, lease_heartbeat, lease_inbox FROM runs "
                        "ORDER BY id"),
         {}, [&](const QSqlQuery &q) {
             RunStamp stamp;
             stamp.id = q.value(0).toLongLong();
             stamp.updatedAt = q.value(1).toString();
             stamp.state = runStateFromString(q.value(2).toString());
             RunLease l;
             l.pid = q.value(3).toLongLong();
             l.host = q.value(4).toString();
             l.heartbeat = QDateTime::fromString(q.value(5).toString(), Qt::ISODateWithMs);
             l.takesRequests = q.value(6).toString() == inboxOf(l.pid, l.host);
             if (l.held()) {
                 l.alive = leaseAlive(l.pid, l.host, l.heartbeat);
                 stamp.lease = l;
             }
             out << stamp;
         });
    return out;
}

CandidateRows RunStore::candidatesSince(qint64 runId, const QString &since, qint64 afterId)
{
    CandidateRows out;
    // Two index lookups (the run's rows by updated_at, new rows by id), not a scan of the run's rows.
    read(QStringLiteral("SELECT * FROM candidates WHERE run_id=:run AND updated_at >= :since "
                        "UNION SELECT * FROM candidates WHERE run_id=:run2 AND id > :after ORDER BY id"),
         {{":run", runId}, {":since", nn(since)}, {":run2", runId}, {":after", afterId}}, [&](const QSqlQuery &q) {
             out.candidates << readCandidate(q);
             out.updatedAt << q.value(QStringLiteral("updated_at")).toString();
         });
    return out;
}

QList<RunStore::CallStamp> RunStore::callStamps(qint64 runId, qint64 fromId)
{
    QList<CallStamp> out;
    read(QStringLiteral("SELECT id, candidate_id, status FROM llm_calls WHERE run_id=:run AND id >= :from ORDER BY id"),
         {{":run", runId}, {":from", fromId}}, [&](const QSqlQuery &q) {
             out << CallStamp{q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toString()};
         });
    return out;
}

QList<std::pair<qint64, qint64>> RunStore::evaluationStepsAfter(qint64 runId, qint64 afterId)
{
    QList<std::pair<qint64, qint64>> out;
    read(QStringLiteral("SELECT e.id, e.candidate_id FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
                        "WHERE e.id > :after AND c.run_id = :run ORDER BY e.id"),
         {{":after", afterId}, {":run", runId}}, [&](const QSqlQuery &q) {
             out.append({q.value(0).toLongLong(), q.value(1).toLongLong()});
         });
    return out;
}

qint64 RunStore::lastEvaluationStepId()
{
    qint64 id = 0;
    read(QStringLiteral("SELECT coalesce(max(id), 0) FROM evaluations"), {},
         [&](const QSqlQuery &q) { id = q.value(0).toLongLong(); });
    return id;
}

int RunStore::requestsInFlight(qint64 runId)
{
    int n = 0;
    read(QStringLiteral("SELECT count(*) FROM llm_calls WHERE run_id=:run AND status='in_flight'"), {{":run", runId}},
         [&](const QSqlQuery &q) { n = q.value(0).toInt(); });
    return n;
}

QList<qint64> RunStore::candidatesInEvaluation(qint64 runId)
{
    QList<qint64> ids;
    read(QStringLiteral("SELECT id FROM candidates WHERE run_id=:run AND status IN ('pending', 'compiling', 'testing', "
                        "'benchmarking')"),
         {{":run", runId}}, [&](const QSqlQuery &q) { ids << q.value(0).toLongLong(); });
    return ids;
}

} // namespace autocomp
