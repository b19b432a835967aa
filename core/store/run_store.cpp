#include "store/run_store.h"
#include "store/store_sql.h"

#include <QAtomicInteger>
#include <QDir>
#include <QFileInfo>
#include <QSqlDatabase>
#include <QStandardPaths>
#include <QUrl>

#include <cerrno>

namespace autocomp {

using namespace store_sql;

namespace {
QAtomicInteger<quint64> s_connectionCounter;
} // namespace

void RunStore::fail(const QSqlError &error)
{
    m_lastError = classify(error, m_path);
    if (m_batchDepth > 0)
        m_batchFailed = true;
}

QSqlQuery &RunStore::query(const QString &sql)
{
    // Statements are prepared once per connection: SQLite's parser was most of a write's cost.
    auto it = m_queries.find(sql);
    if (it == m_queries.end()) {
        auto q = std::make_unique<QSqlQuery>(QSqlDatabase::database(m_connectionName));
        if (!q->prepare(sql))
            fail(q->lastError());
        it = m_queries.emplace(sql, std::move(q)).first;
    }
    return *it->second;
}

bool RunStore::beginBatch()
{
    // IMMEDIATE takes the write lock now (waiting out another writer with the busy timeout) rather than at
    // the first write, where a stale read snapshot could only fail.
    if (m_batchDepth == 0) {
        m_batchFailed = false;
        m_leaseChecked.clear();
    }
    QSqlQuery &q = query(m_batchDepth == 0 ? QStringLiteral("BEGIN IMMEDIATE")
                                           : QStringLiteral("SAVEPOINT batch%1").arg(m_batchDepth));
    const bool ok = q.exec();
    ++m_batchDepth;
    if (!ok) {
        // Counted anyway, so the matching endBatch() balances; the batch is doomed and writes in it are refused.
        fail(q.lastError());
        m_batchFailed = true;
        m_beginFailedDepth = m_beginFailedDepth ? m_beginFailedDepth : m_batchDepth;
        return false;
    }
    return true;
}

bool RunStore::endBatch(bool ok)
{
    if (m_batchDepth == 0)
        return false;
    if (m_beginFailedDepth == m_batchDepth) {
        // Its BEGIN or SAVEPOINT never happened: nothing to end at this level.
        m_beginFailedDepth = 0;
        --m_batchDepth;
        if (m_batchDepth == 0)
            m_batchFailed = false;
        return false;
    }
    --m_batchDepth;
    if (m_batchDepth == 0 && m_batchFailed) {
        // A write of this batch failed: none of it is kept.
        query(QStringLiteral("ROLLBACK")).exec();
        m_batchFailed = false;
        return false;
    }
    QStringList statements;
    if (m_batchDepth == 0)
        statements << (ok ? QStringLiteral("COMMIT") : QStringLiteral("ROLLBACK"));
    else if (ok)
        statements << QStringLiteral("RELEASE batch%1").arg(m_batchDepth);
    else
        statements << QStringLiteral("ROLLBACK TO batch%1").arg(m_batchDepth)
                   << QStringLiteral("RELEASE batch%1").arg(m_batchDepth);
    for (const QString &sql : std::as_const(statements)) {
        QSqlQuery &q = query(sql);
        if (!q.exec()) {
            fail(q.lastError());
            if (m_batchDepth == 0) {
                query(QStringLiteral("ROLLBACK")).exec(); // a failed COMMIT leaves the transaction open
                m_batchFailed = false;
            }
            return false;
        }
    }
    return ok;
}

RunStore::~RunStore()
{
    m_queries.clear();
    {
        QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
        if (db.isOpen())
            db.close();
    }
    QSqlDatabase::removeDatabase(m_connectionName);
}

QString RunStore::defaultPath()
{
    QString env = qEnvironmentVariable("AUTOCOMP_STORE");
    if (!env.isEmpty())
        return env;
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation)
        + QStringLiteral("/autocomp-workbench/runs.sqlite");
}

std::unique_ptr<RunStore> RunStore::open(const QString &path, QString *error)
{
    return open(path, OpenOptions{}, error);
}

std::unique_ptr<RunStore> RunStore::open(const QString &path, const OpenOptions &options, QString *error)
{
    // Reported by the caller (once): the CLI prints it, the workbench shows it.
    auto setError = [&](const QString &message) {
        if (error)
            *error = message;
    };
    const QFileInfo info(path);
    const QString folder = info.absolutePath();
    if (info.exists() && !info.isFile()) {
        setError(QStringLiteral("%1: not a file").arg(path));
        return nullptr;
    }
    bool readOnly = false;
    QString readOnlyReason;
    if (!info.exists()) {
        if (!options.create) {
            setError(QDir(folder).exists()
                         ? QStringLiteral("%1: no such store").arg(path)
                         : QStringLiteral("%1: no such store (the folder %2 does not exist)").arg(path, folder));
            return nullptr;
        }
        if (!QDir(folder).exists() && !options.createFolders) {
            setError(QStringLiteral("%1: the folder %2 does not exist").arg(path, folder));
            return nullptr;
        }
        if (!QDir(folder).exists()) {
            // The nearest existing folder says whether this is a permission problem.
            QString existing = folder;
            while (!QFileInfo::exists(existing) && existing != QDir::rootPath())
                existing = QFileInfo(existing).absolutePath();
            if (!writableByUs(existing)) {
                setError(
                    QStringLiteral("permission denied: cannot create the folder %1 for the store (%2 is not writable)")
                        .arg(folder, existing));
                return nullptr;
            }
            if (!QDir().mkpath(folder)) {
                setError(QStringLiteral("%1: cannot create the folder %2").arg(path, folder));
                return nullptr;
            }
        }
        if (!writableByUs(folder)) {
            setError(QStringLiteral("permission denied: cannot create the store %1 (the folder %2 is not writable)")
                         .arg(path, folder));
            return nullptr;
        }
    } else if (!writableByUs(info.absoluteFilePath()) || !writableByUs(folder)) {
        // SQLite needs to write the file, and its folder for the write-ahead log.
        readOnlyReason = !writableByUs(info.absoluteFilePath())
            ? QStringLiteral("%1 is not writable (%2)")
                  .arg(path, errno == EROFS ? QStringLiteral("read-only file system") : QStringLiteral("permissions"))
            : QStringLiteral("its folder %1 is not writable").arg(folder);
        if (!options.allowReadOnly) {
            setError(
                QStringLiteral("permission denied: %1; this command needs to write the store").arg(readOnlyReason));
            return nullptr;
        }
        readOnly = true;
    }
    std::unique_ptr<RunStore> store(new RunStore);
    store->m_path = info.absoluteFilePath();
    store->m_readOnly = readOnly;
    store->m_check = options.check;
    if (readOnly)
        store->m_readOnlyNote =
            QStringLiteral("opened read-only: %1; runs can be browsed and exported, not changed").arg(readOnlyReason);
    auto connect = [&](bool immutable) -> bool {
        store->m_connectionName = QStringLiteral("autocomp-store-%1").arg(++s_connectionCounter);
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), store->m_connectionName);
        if (immutable) {
            // A WAL database in a folder we cannot write: no -shm can be made, so read it as immutable
            // (nobody can change it there either).
            db.setDatabaseName(QStringLiteral("file:%1?immutable=1")
                                   .arg(QString::fromUtf8(QUrl::toPercentEncoding(store->m_path, "/"))));
            db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_OPEN_URI"));
        } else {
            db.setDatabaseName(store->m_path);
            db.setConnectOptions(readOnly ? QStringLiteral("QSQLITE_BUSY_TIMEOUT=10000;QSQLITE_OPEN_READONLY")
                                          : QStringLiteral("QSQLITE_BUSY_TIMEOUT=10000"));
        }
        if (!db.open()) {
            setError(QStringLiteral("%1: cannot open: %2").arg(path, classify(db.lastError(), store->m_path)));
            return false;
        }
        return true;
    };
    if (!connect(false))
        return nullptr;
    QString migrateError;
    if (!store->migrate(&migrateError)) {
        if (readOnly) {
            store->m_queries.clear();
            QSqlDatabase::database(store->m_connectionName, false).close();
            QSqlDatabase::removeDatabase(store->m_connectionName);
            QString retryError;
            if (connect(true) && store->migrate(&retryError))
                return store;
        }
        setError(QStringLiteral("%1: %2").arg(path, migrateError));
        return nullptr;
    }
    return store;
}

bool RunStore::exec(const QString &sql)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    if (!q.exec(sql)) {
        fail(q.lastError());
        return false;
    }
    return true;
}

bool RunStore::read(const QString &sql, Binds binds, const std::function<void(const QSqlQuery &)> &row)
{
    QSqlQuery &q = query(sql);
    for (const auto &[name, value] : binds)
        q.bindValue(QLatin1String(name), value);
    m_readFailed = !q.exec();
    if (m_readFailed) {
        fail(q.lastError());
        return false;
    }
    while (q.next())
        row(q);
    q.finish();
    return true;
}

qint64 RunStore::createRun(const RunInfo &run)
{
    if (doomed())
        return 0;
    QSqlQuery &q = query(QStringLiteral("INSERT INTO runs (target, problem, agent, config_yaml, state, stop_reason, "
                                        "label, created_at, updated_at, iteration, metric, metric_unit, "
                                        "baseline_score, best_score, best_candidate_id, usd, tokens_in, tokens_out, "
                                        "llm_calls, schedule) VALUES (:target, :problem, "
                                        ":agent, :config_yaml, :state, :stop_reason, :label, :created_at, :updated_at, "
                                        ":iteration, :metric, :metric_unit, :baseline_score, :best_score, "
                                        ":best_candidate_id, :usd, :tokens_in, :tokens_out, :llm_calls, :schedule)"));
    bindRun(q, run);
    q.bindValue(QStringLiteral(":created_at"),
                run.createdAt.isValid() ? run.createdAt.toUTC().toString(Qt::ISODateWithMs) : now());
    if (!q.exec()) {
        fail(q.lastError());
        return 0;
    }
    return q.lastInsertId().toLongLong();
}

bool RunStore::updateRun(const RunInfo &run)
{
    return leased(run.id, [&]() -> bool {
        if (doomed())
            return false;
        // An empty unit keeps the stored one: the RunInfo may have been read before fillMetricUnits() filled it.
        QSqlQuery &q = query(
            QStringLiteral("UPDATE runs SET target=:target, problem=:problem, agent=:agent, "
                           "config_yaml=:config_yaml, state=:state, stop_reason=:stop_reason, "
                           "label=:label, updated_at=:updated_at, iteration=:iteration, "
                           "metric=:metric, metric_unit=coalesce(nullif(:metric_unit, ''), metric_unit), "
                           "baseline_score=:baseline_score, "
                           "best_score=:best_score, "
                           "best_candidate_id=:best_candidate_id, usd=:usd, tokens_in=:tokens_in, "
                           "tokens_out=:tokens_out, llm_calls=:llm_calls, "
                           "schedule=:schedule WHERE id=:id"));
        bindRun(q, run);
        q.bindValue(QStringLiteral(":id"), run.id);
        if (!q.exec()) {
            fail(q.lastError());
            return false;
        }
        return true;
    });
}

bool RunStore::fillMetricUnits(const std::function<QString(const RunInfo &)> &unitOf)
{
    QList<RunInfo> missing;
    if (!read(QStringLiteral("SELECT * FROM runs WHERE metric_unit='' ORDER BY id"), {},
              [&](const QSqlQuery &q) { missing << readRun(q); }))
        return false;
    // Not a change of the run (updated_at stays): followers need not read it again, and its unit was already
    // shown from the metric's name.
    QSqlQuery &q = query(QStringLiteral("UPDATE runs SET metric_unit=:unit WHERE id=:id AND metric_unit=''"));
    for (const RunInfo &run : std::as_const(missing)) {
        const QString unit = unitOf(run);
        if (unit.isEmpty())
            continue;
        q.bindValue(QStringLiteral(":unit"), unit);
        q.bindValue(QStringLiteral(":id"), run.id);
        if (!q.exec()) {
            fail(q.lastError());
            return false;
        }
    }
    return true;
}

bool RunStore::deleteRun(qint64 runId)
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName);
    beginBatch();
    QSqlQuery q(db);
    bool ok = true;
    for (const QString &sql :
         {QStringLiteral("DELETE FROM evaluations WHERE candidate_id IN (SELECT id FROM candidates WHERE run_id=:id)"),
          QStringLiteral("DELETE FROM llm_calls WHERE run_id=:id"),
          QStringLiteral("DELETE FROM run_requests WHERE run_id=:id"),
          QStringLiteral("DELETE FROM candidates WHERE run_id=:id"), QStringLiteral("DELETE FROM runs WHERE id=:id")}) {
        q.prepare(sql);
        q.bindValue(QStringLiteral(":id"), runId);
        if (!q.exec()) {
            fail(q.lastError());
            ok = false;
            break;
        }
    }
    if (!ok) {
        endBatch(false);
        return false;
    }
    return endBatch();
}

qint64 RunStore::addCandidate(const Candidate &candidate)
{
    return leased(candidate.runId, [&]() -> qint64 {
        if (doomed())
            return 0;
        QSqlQuery &q = query(
            QStringLiteral("INSERT INTO candidates (run_id, parent_id, iteration, origin, status, plan, menu_item, "
                           "code, score, metrics, feedback, flags, "
                           "plan_model, code_model, error, in_beam, plan_call_id, plan_slot, sample, fix_of, "
                           "created_at, updated_at) VALUES (:run_id, "
                           ":parent_id, :iteration, :origin, :status, :plan, :menu_item, :code, :score, :metrics, "
                           ":feedback, :flags, :plan_model, :code_model, "
                           ":error, :in_beam, :plan_call_id, :plan_slot, :sample, :fix_of, :created_at, :updated_at)"));
        bindCandidate(q, candidate);
        q.bindValue(QStringLiteral(":created_at"), now());
        if (!q.exec()) {
            fail(q.lastError());
            return 0;
        }
        return q.lastInsertId().toLongLong();
    });
}

bool RunStore::updateCandidate(const Candidate &candidate)
{
    return leased(candidate.runId, [&]() -> bool {
        if (doomed())
            return false;
        QSqlQuery &q = query(
            QStringLiteral("UPDATE candidates SET run_id=:run_id, parent_id=:parent_id, iteration=:iteration, "
                           "origin=:origin, status=:status, plan=:plan, "
                           "menu_item=:menu_item, code=:code, score=:score, metrics=:metrics, feedback=:feedback, "
                           "flags=:flags, plan_model=:plan_model, "
                           "code_model=:code_model, error=:error, in_beam=:in_beam, plan_call_id=:plan_call_id, "
                           "plan_slot=:plan_slot, sample=:sample, fix_of=:fix_of, updated_at=:updated_at "
                           "WHERE id=:id"));
        bindCandidate(q, candidate);
        q.bindValue(QStringLiteral(":id"), candidate.id);
        if (!q.exec()) {
            fail(q.lastError());
            return false;
        }
        return true;
    });
}

bool RunStore::setBeam(qint64 runId, const QList<qint64> &candidateIds)
{
    return leased(runId, [&]() -> bool {
        if (doomed())
            return false;
        beginBatch();
        // A beam change is a change of those rows (updated_at): views that follow the store see it.
        const QString stamp = now();
        QSqlQuery &q = query(
            QStringLiteral("UPDATE candidates SET in_beam=0, updated_at=:now WHERE run_id=:run AND in_beam=1"));
        q.bindValue(QStringLiteral(":run"), runId);
        q.bindValue(QStringLiteral(":now"), stamp);
        bool ok = q.exec();
        QSqlQuery &mark = query(
            QStringLiteral("UPDATE candidates SET in_beam=1, updated_at=:now WHERE id=:id AND run_id=:run"));
        for (qint64 id : candidateIds) {
            if (!ok)
                break;
            mark.bindValue(QStringLiteral(":id"), id);
            mark.bindValue(QStringLiteral(":run"), runId);
            mark.bindValue(QStringLiteral(":now"), stamp);
            ok = mark.exec();
        }
        if (!ok) {
            fail(q.lastError().isValid() ? q.lastError() : mark.lastError());
            endBatch(false);
            return false;
        }
        return endBatch();
    });
}

qint64 RunStore::addLlmCall(const LlmCall &call)
{
    return leased(call.runId, [&]() -> qint64 {
        if (doomed())
            return 0;
        QSqlQuery &q = query(
            QStringLiteral("INSERT INTO llm_calls (run_id, candidate_id, phase, request_hash, provider, model, prompt, "
                           "response, reasoning, tokens_in, "
                           "tokens_out, usd, latency_ms, retries, status, error, created_at, attempts) VALUES "
                           "(:run_id, :candidate_id, :phase, :request_hash, :provider, "
                           ":model, :prompt, :response, :reasoning, :tokens_in, :tokens_out, :usd, :latency_ms, "
                           ":retries, :status, :error, :created_at, :attempts)"));
        q.bindValue(QStringLiteral(":run_id"),
                    call.runId > 0 ? QVariant(call.runId) : QVariant(QMetaType::fromType<qint64>()));
        q.bindValue(QStringLiteral(":phase"), nn(call.phase));
        q.bindValue(QStringLiteral(":request_hash"), nn(call.requestHash));
        q.bindValue(QStringLiteral(":provider"), nn(call.provider));
        q.bindValue(QStringLiteral(":model"), nn(call.model));
        q.bindValue(QStringLiteral(":prompt"), nn(call.prompt));
        bindAnswer(q, call);
        q.bindValue(QStringLiteral(":created_at"),
                    call.createdAt.isValid() ? call.createdAt.toUTC().toString(Qt::ISODateWithMs) : now());
        if (!q.exec()) {
            fail(q.lastError());
            return 0;
        }
        return q.lastInsertId().toLongLong();
    });
}

bool RunStore::addEvaluation(qint64 candidateId, const EvalResult &result)
{
    return leased(AnyDrivenRun, [&]() -> bool {
        if (doomed())
            return false;
        beginBatch();
        int index = 0;
        for (const StepResult &step : result.steps) {
            QSqlQuery &q = query(QStringLiteral("INSERT INTO evaluations (candidate_id, step_index, name, command, "
                                                "exit_code, timed_out, crashed, duration_ms, "
                                                "log, created_at) VALUES (:candidate_id, :step_index, :name, :command, "
                                                ":exit_code, :timed_out, :crashed, "
                                                ":duration_ms, :log, :created_at)"));
            q.bindValue(QStringLiteral(":candidate_id"), candidateId);
            q.bindValue(QStringLiteral(":step_index"), index++);
            q.bindValue(QStringLiteral(":name"), nn(step.name));
            q.bindValue(QStringLiteral(":command"), jsonText(step.command));
            q.bindValue(QStringLiteral(":exit_code"), step.exitCode);
            q.bindValue(QStringLiteral(":timed_out"), step.timedOut ? 1 : 0);
            q.bindValue(QStringLiteral(":crashed"), step.crashed ? 1 : 0);
            q.bindValue(QStringLiteral(":duration_ms"), step.durationMs);
            q.bindValue(QStringLiteral(":log"), nn(step.log));
            q.bindValue(QStringLiteral(":created_at"), now());
            if (!q.exec()) {
                fail(q.lastError());
                endBatch(false);
                return false;
            }
        }
        return endBatch();
    });
}

bool RunStore::requestState(qint64 runId, const QString &request)
{
    return leased(runId, [&]() -> bool {
        QSqlQuery &q = query(QStringLiteral("UPDATE runs SET requested_state=:request WHERE id=:id"));
        q.bindValue(QStringLiteral(":request"), nn(request));
        q.bindValue(QStringLiteral(":id"), runId);
        if (!q.exec()) {
            fail(q.lastError());
            return false;
        }
        return q.numRowsAffected() == 1;
    });
}

QString RunStore::requestedState(qint64 runId)
{
    QString request;
    read(QStringLiteral("SELECT requested_state FROM runs WHERE id=:id"), {{":id", runId}},
         [&](const QSqlQuery &q) { request = q.value(0).toString(); });
    return request;
}

qint64 RunStore::addRunRequest(const RunRequest &request)
{
    if (doomed())
        return 0;
    QSqlQuery &q = query(QStringLiteral(
        "INSERT INTO run_requests (run_id, kind, parent_id, text, from_pid, from_host, state, created_at) "
        "VALUES (:run, :kind, :parent, :text, :pid, :host, 'pending', :now)"));
    q.bindValue(QStringLiteral(":run"), request.runId);
    q.bindValue(QStringLiteral(":kind"), RunRequest::kindName(request.kind));
    q.bindValue(QStringLiteral(":parent"), request.parentId);
    q.bindValue(QStringLiteral(":text"), nn(request.text));
    q.bindValue(QStringLiteral(":pid"), ownPid());
    q.bindValue(QStringLiteral(":host"), hostName());
    q.bindValue(QStringLiteral(":now"), now());
    if (!q.exec()) {
        fail(q.lastError());
        return 0;
    }
    return q.lastInsertId().toLongLong();
}

QList<RunRequest> RunStore::pendingRunRequests(qint64 runId)
{
    return requestsWhere(QStringLiteral("run_id=:value AND state='pending'"), runId);
}

QList<RunRequest> RunStore::requestsWhere(const QString &condition, qint64 value)
{
    QList<RunRequest> out;
    read(QStringLiteral("SELECT %1 FROM run_requests WHERE %2 ORDER BY id").arg(s_requestColumns, condition),
         {{":value", value}}, [&](const QSqlQuery &q) { out << requestFromQuery(q); });
    return out;
}

bool RunStore::settleRunRequest(qint64 requestId, qint64 candidateId, const QString &reason)
{
    return leased(AnyDrivenRun, [&]() -> bool {
        if (doomed())
            return false;
        QSqlQuery &q = query(QStringLiteral(
            "UPDATE run_requests SET state=:state, candidate_id=:candidate, reason=:reason, driver_pid=:pid, "
            "driver_host=:host, handled_at=:now WHERE id=:id AND state='pending'"));
        q.bindValue(QStringLiteral(":state"), candidateId ? QStringLiteral("taken") : QStringLiteral("refused"));
        q.bindValue(QStringLiteral(":candidate"),
                    candidateId ? QVariant(candidateId) : QVariant(QMetaType::fromType<qint64>()));
        q.bindValue(QStringLiteral(":reason"), nn(reason));
        q.bindValue(QStringLiteral(":pid"), ownPid());
        q.bindValue(QStringLiteral(":host"), hostName());
        q.bindValue(QStringLiteral(":now"), now());
        q.bindValue(QStringLiteral(":id"), requestId);
        if (!q.exec()) {
            fail(q.lastError());
            return false;
        }
        if (q.numRowsAffected() != 1) {
            m_lastError = QStringLiteral("request %1 is not pending").arg(requestId);
            return false;
        }
        return true;
    });
}

QList<RunRequest> RunStore::runRequests(qint64 fromId) { return requestsWhere(QStringLiteral("id>=:value"), fromId); }

std::optional<RunRequest> RunStore::runRequest(qint64 requestId)
{
    std::optional<RunRequest> out;
    read(QStringLiteral("SELECT %1 FROM run_requests WHERE id=:id").arg(s_requestColumns), {{":id", requestId}},
         [&](const QSqlQuery &q) { out = requestFromQuery(q); });
    return out;
}

QList<RunInfo> RunStore::runs()
{
    QList<RunInfo> out;
    read(QStringLiteral("SELECT * FROM runs ORDER BY id"), {}, [&](const QSqlQuery &q) { out << readRun(q); });
    return out;
}

std::optional<RunInfo> RunStore::run(qint64 runId)
{
    std::optional<RunInfo> out;
    read(QStringLiteral("SELECT * FROM runs WHERE id=:id"), {{":id", runId}},
         [&](const QSqlQuery &q) { out = readRun(q); });
    return out;
}

QList<Candidate> RunStore::candidates(qint64 runId)
{
    QList<Candidate> out;
    read(QStringLiteral("SELECT * FROM candidates WHERE run_id=:run ORDER BY id"), {{":run", runId}},
         [&](const QSqlQuery &q) { out << readCandidate(q); });
    return out;
}

std::optional<Candidate> RunStore::candidate(qint64 candidateId)
{
    std::optional<Candidate> out;
    read(QStringLiteral("SELECT * FROM candidates WHERE id=:id"), {{":id", candidateId}},
         [&](const QSqlQuery &q) { out = readCandidate(q); });
    return out;
}

QList<LlmCall> RunStore::llmCalls(qint64 runId)
{
    QList<LlmCall> out;
    read(QStringLiteral("SELECT * FROM llm_calls WHERE run_id=:run ORDER BY id"), {{":run", runId}},
         [&](const QSqlQuery &q) { out << readCall(q); });
    return out;
}

QList<LlmCall> RunStore::llmCalls(qint64 runId, const QString &phase)
{
    QList<LlmCall> out;
    read(QStringLiteral("SELECT * FROM llm_calls WHERE run_id=:run AND phase=:phase ORDER BY id"),
         {{":run", runId}, {":phase", phase}}, [&](const QSqlQuery &q) { out << readCall(q); });
    return out;
}

QList<LlmCall> RunStore::llmCallsForCandidate(qint64 candidateId)
{
    QList<LlmCall> out;
    read(QStringLiteral("SELECT * FROM llm_calls WHERE candidate_id=:id OR id=(SELECT plan_call_id FROM candidates "
                        "WHERE id=:id) ORDER BY id"),
         {{":id", candidateId}}, [&](const QSqlQuery &q) { out << readCall(q); });
    return out;
}

std::optional<LlmCall> RunStore::cachedResponse(const QString &requestHash, qint64 runId)
{
    if (runId <= 0)
        return cachedResponse(requestHash);
    std::optional<LlmCall> out;
    read(QStringLiteral(
             "SELECT * FROM llm_calls WHERE request_hash=:hash AND run_id=:run AND status='ok' ORDER BY id LIMIT 1"),
         {{":hash", requestHash}, {":run", runId}}, [&](const QSqlQuery &q) { out = readCall(q); });
    return out;
}

bool RunStore::completeLlmCall(const LlmCall &call)
{
    return leased(call.runId, [&]() -> bool {
        if (doomed())
            return false;
        QSqlQuery &q = query(QStringLiteral("UPDATE llm_calls SET candidate_id=:candidate_id, response=:response, "
                                            "reasoning=:reasoning, tokens_in=:tokens_in, "
                                            "tokens_out=:tokens_out, usd=:usd, latency_ms=:latency_ms, "
                                            "retries=:retries, status=:status, error=:error, attempts=:attempts "
                                            "WHERE id=:id"));
        bindAnswer(q, call);
        q.bindValue(QStringLiteral(":id"), call.id);
        if (!q.exec()) {
            fail(q.lastError());
            return false;
        }
        return q.numRowsAffected() == 1;
    });
}

QList<LlmCall> RunStore::unconfirmedCalls(qint64 runId)
{
    QList<LlmCall> out;
    read(QStringLiteral(
             "SELECT * FROM llm_calls WHERE run_id=:run AND status IN ('in_flight', 'unconfirmed') ORDER BY id"),
         {{":run", runId}}, [&](const QSqlQuery &q) { out << readCall(q); });
    return out;
}

bool RunStore::settleInFlightCalls(qint64 runId)
{
    return leased(runId, [&]() -> bool {
        if (doomed())
            return false;
        QSqlQuery &q = query(QStringLiteral("UPDATE llm_calls SET status='unconfirmed', error='no answer recorded: the "
                                            "process ended while it was in flight' "
                                            "WHERE run_id=:run AND status='in_flight'"));
        q.bindValue(QStringLiteral(":run"), runId);
        if (!q.exec()) {
            fail(q.lastError());
            return false;
        }
        return true;
    });
}

template<typename Write>
auto RunStore::leased(qint64 runId, Write write) -> decltype(write())
{
    using Result = decltype(write());
    const bool driven = runId == AnyDrivenRun ? !m_heldLeases.isEmpty() || !m_lostLeases.isEmpty()
                                              : m_heldLeases.contains(runId) || m_lostLeases.contains(runId);
    if (!driven || doomed())
        return write();
    // The check and the write commit together: a process that took the run over in between waits for the write
    // lock this transaction holds, and sees the write; one that did so before makes the check fail.
    const bool own = m_batchDepth == 0;
    if (own && !beginBatch()) {
        endBatch(false);
        return Result{};
    }
    const Result result = stillLeased(runId) ? write() : Result{};
    if (own && !endBatch(bool(result)))
        return Result{};
    return result;
}

std::optional<LlmCall> RunStore::cachedResponse(const QString &requestHash)
{
    std::optional<LlmCall> out;
    read(QStringLiteral("SELECT * FROM llm_calls WHERE request_hash=:hash AND status='ok' ORDER BY id LIMIT 1"),
         {{":hash", requestHash}}, [&](const QSqlQuery &q) { out = readCall(q); });
    return out;
}

QList<StepResult> RunStore::evaluationSteps(qint64 candidateId)
{
    QList<StepResult> out;
    read(QStringLiteral("SELECT * FROM evaluations WHERE candidate_id=:id ORDER BY id"), {{":id", candidateId}},
         [&](const QSqlQuery &q) {
             StepResult s;
             s.name = q.value(QStringLiteral("name")).toString();
             s.command = jsonList(q.value(QStringLiteral("command")));
             s.exitCode = q.value(QStringLiteral("exit_code")).toInt();
             s.timedOut = q.value(QStringLiteral("timed_out")).toInt() != 0;
             s.crashed = q.value(QStringLiteral("crashed")).toInt() != 0;
             s.durationMs = q.value(QStringLiteral("duration_ms")).toDouble();
             s.log = q.value(QStringLiteral("log")).toString();
             out << s;
         });
    return out;
}

} // namespace autocomp
