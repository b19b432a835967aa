#include "store/run_store.h"

#include <QAtomicInteger>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QThread>
#include <QSysInfo>
#include <QUrl>
#include <QCoreApplication>

#include <cerrno>
#include <cmath>

#include <signal.h>
#include <unistd.h>

namespace autocomp {

namespace {

// PRAGMA application_id marks a file as ours ("ACWB").
constexpr qint64 s_applicationId = 0x41435742;
QAtomicInteger<quint64> s_connectionCounter;

QString jsonText(const QStringList &list)
{
    return QString::fromUtf8(QJsonDocument(QJsonArray::fromStringList(list)).toJson(QJsonDocument::Compact));
}

QStringList jsonList(const QVariant &value)
{
    QStringList out;
    const QJsonArray array = QJsonDocument::fromJson(value.toString().toUtf8()).array();
    for (const QJsonValue &v : array)
        out << v.toString();
    return out;
}

QVariant nullableDouble(double value)
{
    return std::isnan(value) ? QVariant(QMetaType::fromType<double>()) : QVariant(value);
}

// Qt binds a null QString as SQL NULL; our text columns are NOT NULL.
QString nn(const QString &text) { return text.isNull() ? QString(QLatin1String("")) : text; }

QString now() { return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs); }

// Schema migrations, in order; index i migrates from version i to i+1.
const QStringList &migrations()
{
    static const QStringList s_migrations{
        QStringLiteral(R"SQL(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  target TEXT NOT NULL, problem TEXT NOT NULL, agent TEXT NOT NULL DEFAULT '',
  config_yaml TEXT NOT NULL DEFAULT '', state TEXT NOT NULL, stop_reason TEXT NOT NULL DEFAULT '',
  label TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  iteration INTEGER NOT NULL DEFAULT 0, metric TEXT NOT NULL DEFAULT '',
  baseline_score REAL, best_score REAL, best_candidate_id INTEGER,
  usd REAL NOT NULL DEFAULT 0, tokens_in INTEGER NOT NULL DEFAULT 0, tokens_out INTEGER NOT NULL DEFAULT 0,
  llm_calls INTEGER NOT NULL DEFAULT 0);
CREATE TABLE candidates (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  parent_id INTEGER, iteration INTEGER NOT NULL, origin TEXT NOT NULL, status TEXT NOT NULL,
  plan TEXT NOT NULL DEFAULT '', menu_item TEXT NOT NULL DEFAULT '', code TEXT NOT NULL DEFAULT '',
  score REAL, metrics TEXT NOT NULL DEFAULT '{}', feedback TEXT NOT NULL DEFAULT '[]', flags TEXT NOT NULL DEFAULT '[]',
  plan_model TEXT NOT NULL DEFAULT '', code_model TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '',
  in_beam INTEGER NOT NULL DEFAULT 0, plan_call_id INTEGER, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX candidates_run ON candidates(run_id);
CREATE TABLE llm_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE, candidate_id INTEGER,
  phase TEXT NOT NULL, request_hash TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
  prompt TEXT NOT NULL, response TEXT NOT NULL DEFAULT '', reasoning TEXT NOT NULL DEFAULT '',
  tokens_in INTEGER NOT NULL DEFAULT 0, tokens_out INTEGER NOT NULL DEFAULT 0, usd REAL NOT NULL DEFAULT 0,
  latency_ms REAL NOT NULL DEFAULT 0, retries INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL, error TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE INDEX llm_calls_run ON llm_calls(run_id);
CREATE INDEX llm_calls_candidate ON llm_calls(candidate_id);
CREATE INDEX llm_calls_hash ON llm_calls(request_hash);
CREATE TABLE evaluations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  candidate_id INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
  step_index INTEGER NOT NULL, name TEXT NOT NULL, command TEXT NOT NULL, exit_code INTEGER NOT NULL,
  timed_out INTEGER NOT NULL DEFAULT 0, crashed INTEGER NOT NULL DEFAULT 0, duration_ms REAL NOT NULL DEFAULT 0,
  log TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE INDEX evaluations_candidate ON evaluations(candidate_id);
)SQL"),
        QStringLiteral(R"SQL(
ALTER TABLE candidates ADD COLUMN plan_slot INTEGER NOT NULL DEFAULT -1;
ALTER TABLE candidates ADD COLUMN sample INTEGER NOT NULL DEFAULT 0;
ALTER TABLE candidates ADD COLUMN fix_of INTEGER;
ALTER TABLE runs ADD COLUMN requested_state TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN schedule TEXT NOT NULL DEFAULT '[]';
CREATE INDEX candidates_iteration ON candidates(run_id, iteration);
)SQL"),
        // The run lease (who drives a run); llm_calls.status gains in_flight and unconfirmed.
        QStringLiteral(R"SQL(
ALTER TABLE runs ADD COLUMN lease_pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN lease_host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN lease_heartbeat TEXT NOT NULL DEFAULT '';
CREATE INDEX llm_calls_status ON llm_calls(run_id, status);
)SQL"),
        // Why each earlier attempt of a call failed and why it was sent again (one line each).
        QStringLiteral(R"SQL(
ALTER TABLE llm_calls ADD COLUMN attempts TEXT NOT NULL DEFAULT '';
)SQL"),
        // Views that follow a store read a run's candidates written since a moment (StoreFollower).
        QStringLiteral(R"SQL(
CREATE INDEX candidates_updated ON candidates(run_id, updated_at);
)SQL"),
        // Plans and edited code handed to the process that drives a run (RunRequest). runs.lease_inbox: "pid@host"
        // of the lease holder that reads them; a driver of an older version leaves it empty (its lease is taken
        // by an UPDATE that does not know the column).
        QStringLiteral(R"SQL(
ALTER TABLE runs ADD COLUMN lease_inbox TEXT NOT NULL DEFAULT '';
CREATE TABLE run_requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kind TEXT NOT NULL, parent_id INTEGER NOT NULL, text TEXT NOT NULL,
  from_pid INTEGER NOT NULL DEFAULT 0, from_host TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'pending', candidate_id INTEGER, reason TEXT NOT NULL DEFAULT '',
  driver_pid INTEGER NOT NULL DEFAULT 0, driver_host TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL, handled_at TEXT NOT NULL DEFAULT '');
CREATE INDEX run_requests_run ON run_requests(run_id, state);
)SQL"),
    };
    return s_migrations;
}

// SQLite's primary result codes (sqlite3.h) that a user can act on.
QString classify(const QSqlError &error, const QString &path)
{
    const int code = error.nativeErrorCode().toInt() & 0xff;
    const QString text = error.databaseText().isEmpty() ? error.text() : error.databaseText();
    QString kind;
    switch (code) {
    case 13: kind = QStringLiteral("disk full"); break; // SQLITE_FULL
    case 10: kind = QStringLiteral("I/O error"); break; // SQLITE_IOERR
    case 8: kind = QStringLiteral("read-only"); break; // SQLITE_READONLY
    case 3: kind = QStringLiteral("permission denied"); break; // SQLITE_PERM
    case 23: kind = QStringLiteral("permission denied"); break; // SQLITE_AUTH
    case 14: kind = QStringLiteral("cannot open"); break; // SQLITE_CANTOPEN
    case 5:
    case 6: kind = QStringLiteral("busy"); break; // SQLITE_BUSY, SQLITE_LOCKED
    case 11: kind = QStringLiteral("corrupt"); break; // SQLITE_CORRUPT
    default: return text;
    }
    return QStringLiteral("%1: %2: %3").arg(kind, path, text);
}

// How often opening a store tries again where SQLite stays busy past its busy timeout.
constexpr int s_busyRetries = 8;

bool isBusy(const QSqlError &error)
{
    const int code = error.nativeErrorCode().toInt() & 0xff;
    return code == 5 || code == 6; // SQLITE_BUSY, SQLITE_LOCKED
}

QString hostName()
{
    static const QString s_host = QSysInfo::machineHostName();
    return s_host;
}

qint64 ownPid() { return QCoreApplication::applicationPid(); }

bool leaseAlive(qint64 pid, const QString &host, const QDateTime &heartbeat)
{
    if (pid <= 0)
        return false;
    // The engine renews its heartbeat every RunLease::heartbeatIntervalMs(). One older than the timeout is a dead
    // owner even if its pid exists (the pid was reused after a kill or a reboot, or the process is stopped).
    const bool recent = heartbeat.isValid()
        && heartbeat.secsTo(QDateTime::currentDateTimeUtc()) < RunLease::timeoutSecs();
    if (host == hostName()) {
        if (pid == ownPid())
            return true;
        return recent && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
    }
    // Another machine sharing the store: only the heartbeat tells.
    return recent;
}

// The lease_inbox value of a holder that takes run requests.
QString inboxOf(qint64 pid, const QString &host) { return QStringLiteral("%1@%2").arg(pid).arg(host); }

RunRequest requestFromQuery(const QSqlQuery &q)
{
    RunRequest r;
    r.id = q.value(0).toLongLong();
    r.runId = q.value(1).toLongLong();
    r.kind = q.value(2).toString() == QLatin1String("code") ? RunRequest::Kind::Code : RunRequest::Kind::Plan;
    r.parentId = q.value(3).toLongLong();
    r.text = q.value(4).toString();
    r.fromPid = q.value(5).toLongLong();
    r.fromHost = q.value(6).toString();
    const QString state = q.value(7).toString();
    r.state = state == QLatin1String("taken") ? RunRequest::State::Taken
        : state == QLatin1String("refused")   ? RunRequest::State::Refused
                                              : RunRequest::State::Pending;
    r.candidateId = q.value(8).toLongLong();
    r.reason = q.value(9).toString();
    r.driverPid = q.value(10).toLongLong();
    r.driverHost = q.value(11).toString();
    r.createdAt = QDateTime::fromString(q.value(12).toString(), Qt::ISODateWithMs);
    r.handledAt = QDateTime::fromString(q.value(13).toString(), Qt::ISODateWithMs);
    return r;
}

const QString s_requestColumns = QStringLiteral(
    "id, run_id, kind, parent_id, text, from_pid, from_host, state, candidate_id, reason, driver_pid, driver_host, "
    "created_at, handled_at");

bool writableByUs(const QString &path) { return ::access(QFile::encodeName(path).constData(), W_OK) == 0; }

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
    const QString env = qEnvironmentVariable("AUTOCOMP_STORE");
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

bool RunStore::migrate(QString *error)
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName);
    QSqlQuery q(db);
    // Reading the schema is the first access: a file that is not SQLite fails here, before we write.
    if (!q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master")) || !q.next()) {
        *error =
            QStringLiteral(
                "not a readable SQLite database (corrupt or another kind of file): %1. The file was left untouched.")
                .arg(classify(q.lastError(), m_path));
        return false;
    }
    const int objectCount = q.value(0).toInt();
    q.exec(QStringLiteral("PRAGMA application_id"));
    const qint64 appId = q.next() ? q.value(0).toLongLong() : 0;
    if (objectCount > 0 && appId != s_applicationId) {
        *error = QStringLiteral("this SQLite database is not an Autocomp Workbench store; it was left untouched");
        return false;
    }
    int version = 0;
    if (objectCount > 0) {
        if (!q.exec(QStringLiteral("SELECT version FROM schema_version")) || !q.next()) {
            *error = QStringLiteral("the store has no schema version; it was left untouched");
            return false;
        }
        version = q.value(0).toInt();
    }
    if (version > SchemaVersion) {
        *error = QStringLiteral(
                     "the store has schema version %1, newer than this program's %2; update Autocomp Workbench. "
                     "The file was left untouched.")
                     .arg(version)
                     .arg(SchemaVersion);
        return false;
    }
    if (m_readOnly) {
        if (objectCount == 0) {
            *error = QStringLiteral("an empty file, not a store; it was left untouched");
            return false;
        }
        if (version < SchemaVersion)
            m_readOnlyNote +=
                QStringLiteral(" (schema version %1; it is upgraded when the store is opened writable)").arg(version);
        return true;
    }
    if (objectCount > 0 && m_check) {
        if (!q.exec(QStringLiteral("PRAGMA quick_check")) || !q.next()
            || q.value(0).toString() != QLatin1String("ok")) {
            *error = QStringLiteral("integrity check failed (%1); the file was left untouched")
                         .arg(q.lastError().isValid() ? q.lastError().text() : q.value(0).toString());
            return false;
        }
    }
    q.finish(); // no read transaction left open: the exclusive transaction below must not need to upgrade one
    // Several processes may open a new store at once (two `run`s, an `import`): WAL is set outside a transaction,
    // again where another connection held the file at that moment.
    for (int attempt = 0; attempt < s_busyRetries; ++attempt) {
        if (q.exec(QStringLiteral("PRAGMA journal_mode=WAL")) || !isBusy(q.lastError()))
            break;
        QThread::msleep(50 + 50 * attempt);
    }
    q.finish();
    q.exec(QStringLiteral("PRAGMA synchronous=NORMAL"));
    q.exec(QStringLiteral("PRAGMA foreign_keys=ON"));
    if (version == SchemaVersion)
        return true;
    return migrateExclusively(error);
}

bool RunStore::migrateExclusively(QString *error)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    // The version is read again inside the transaction: another process may have created or upgraded the store
    // since it was read above, and only one process at a time gets here. SQLITE_BUSY past the busy timeout (a
    // process that holds the store a long time) is tried again a few times.
    bool begun = false;
    for (int attempt = 0; attempt < s_busyRetries && !begun; ++attempt) {
        begun = q.exec(QStringLiteral("BEGIN EXCLUSIVE"));
        if (!begun && !isBusy(q.lastError()))
            break;
        if (!begun)
            QThread::msleep(50 + 50 * attempt);
    }
    if (!begun) {
        *error = QStringLiteral("cannot start a transaction: %1").arg(classify(q.lastError(), m_path));
        return false;
    }
    auto abandon = [&](const QString &message) {
        *error = message;
        q.finish();
        q.exec(QStringLiteral("ROLLBACK"));
        return false;
    };
    if (!q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master")) || !q.next())
        return abandon(QStringLiteral("cannot read the schema: %1").arg(classify(q.lastError(), m_path)));
    const int objectCount = q.value(0).toInt();
    q.exec(QStringLiteral("PRAGMA application_id"));
    const qint64 appId = q.next() ? q.value(0).toLongLong() : 0;
    q.finish();
    if (objectCount > 0 && appId != s_applicationId)
        return abandon(
            QStringLiteral("this SQLite database is not an Autocomp Workbench store; it was left untouched"));
    int version = 0;
    if (objectCount > 0) {
        if (!q.exec(QStringLiteral("SELECT version FROM schema_version")) || !q.next())
            return abandon(QStringLiteral("the store has no schema version; it was left untouched"));
        version = q.value(0).toInt();
        q.finish();
    }
    if (version > SchemaVersion)
        return abandon(
            QStringLiteral("the store has schema version %1, newer than this program's %2; update Autocomp Workbench. "
                           "The file was left untouched.")
                .arg(version)
                .arg(SchemaVersion));
    // Every step in the one transaction: a kill leaves the store as it was.
    for (; version < SchemaVersion; ++version) {
        bool ok = true;
        if (version == 0) {
            ok = q.exec(QStringLiteral("PRAGMA application_id=%1").arg(s_applicationId))
                && q.exec(QStringLiteral("CREATE TABLE schema_version (version INTEGER NOT NULL)"))
                && q.exec(QStringLiteral("INSERT INTO schema_version VALUES (0)"));
        }
        const QStringList statements = migrations().at(version).split(QLatin1Char(';'), Qt::SkipEmptyParts);
        for (const QString &statement : statements) {
            if (!ok || statement.trimmed().isEmpty())
                continue;
            ok = q.exec(statement);
        }
        ok = ok && q.exec(QStringLiteral("UPDATE schema_version SET version = %1").arg(version + 1));
        if (!ok)
            return abandon(
                QStringLiteral("migration to schema version %1 failed: %2").arg(version + 1).arg(q.lastError().text()));
    }
    if (!q.exec(QStringLiteral("COMMIT")))
        return abandon(QStringLiteral("cannot commit migration: %1").arg(classify(q.lastError(), m_path)));
    return true;
}

namespace {

void bindRun(QSqlQuery &q, const RunInfo &run)
{
    q.bindValue(QStringLiteral(":target"), nn(run.target));
    q.bindValue(QStringLiteral(":problem"), nn(run.problem));
    q.bindValue(QStringLiteral(":agent"), nn(run.agent));
    q.bindValue(QStringLiteral(":config_yaml"), nn(run.configYaml));
    q.bindValue(QStringLiteral(":state"), toString(run.state));
    q.bindValue(QStringLiteral(":stop_reason"), nn(run.stopReason));
    q.bindValue(QStringLiteral(":label"), nn(run.label));
    q.bindValue(QStringLiteral(":iteration"), run.iteration);
    q.bindValue(QStringLiteral(":metric"), nn(run.metric));
    q.bindValue(QStringLiteral(":baseline_score"),
                run.baselineScore > 0 ? QVariant(run.baselineScore) : QVariant(QMetaType::fromType<double>()));
    q.bindValue(QStringLiteral(":best_score"),
                run.bestScore > 0 ? QVariant(run.bestScore) : QVariant(QMetaType::fromType<double>()));
    q.bindValue(QStringLiteral(":best_candidate_id"),
                run.bestCandidateId > 0 ? QVariant(run.bestCandidateId) : QVariant(QMetaType::fromType<qint64>()));
    q.bindValue(QStringLiteral(":usd"), run.usd);
    q.bindValue(QStringLiteral(":tokens_in"), run.tokensIn);
    q.bindValue(QStringLiteral(":tokens_out"), run.tokensOut);
    q.bindValue(QStringLiteral(":llm_calls"), run.llmCalls);
    q.bindValue(QStringLiteral(":schedule"), jsonText(run.schedule));
    q.bindValue(QStringLiteral(":updated_at"), now());
}

RunInfo readRun(const QSqlQuery &q)
{
    RunInfo r;
    r.id = q.value(QStringLiteral("id")).toLongLong();
    r.target = q.value(QStringLiteral("target")).toString();
    r.problem = q.value(QStringLiteral("problem")).toString();
    r.agent = q.value(QStringLiteral("agent")).toString();
    r.configYaml = q.value(QStringLiteral("config_yaml")).toString();
    r.state = runStateFromString(q.value(QStringLiteral("state")).toString());
    r.stopReason = q.value(QStringLiteral("stop_reason")).toString();
    r.label = q.value(QStringLiteral("label")).toString();
    r.createdAt = QDateTime::fromString(q.value(QStringLiteral("created_at")).toString(), Qt::ISODateWithMs);
    r.updatedAt = QDateTime::fromString(q.value(QStringLiteral("updated_at")).toString(), Qt::ISODateWithMs);
    r.iteration = q.value(QStringLiteral("iteration")).toInt();
    r.metric = q.value(QStringLiteral("metric")).toString();
    r.baselineScore = q.value(QStringLiteral("baseline_score")).toDouble();
    r.bestScore = q.value(QStringLiteral("best_score")).toDouble();
    r.bestCandidateId = q.value(QStringLiteral("best_candidate_id")).toLongLong();
    r.usd = q.value(QStringLiteral("usd")).toDouble();
    r.tokensIn = q.value(QStringLiteral("tokens_in")).toLongLong();
    r.tokensOut = q.value(QStringLiteral("tokens_out")).toLongLong();
    r.llmCalls = q.value(QStringLiteral("llm_calls")).toLongLong();
    r.schedule = jsonList(q.value(QStringLiteral("schedule")));
    return r;
}

void bindCandidate(QSqlQuery &q, const Candidate &c)
{
    q.bindValue(QStringLiteral(":run_id"), c.runId);
    q.bindValue(QStringLiteral(":parent_id"),
                c.parentId > 0 ? QVariant(c.parentId) : QVariant(QMetaType::fromType<qint64>()));
    q.bindValue(QStringLiteral(":iteration"), c.iteration);
    q.bindValue(QStringLiteral(":origin"), toString(c.origin));
    q.bindValue(QStringLiteral(":status"), toString(c.status));
    q.bindValue(QStringLiteral(":plan"), nn(c.plan));
    q.bindValue(QStringLiteral(":menu_item"), nn(c.menuItem));
    q.bindValue(QStringLiteral(":code"), nn(c.code));
    q.bindValue(QStringLiteral(":score"), nullableDouble(c.score));
    q.bindValue(QStringLiteral(":metrics"), QString::fromUtf8(QJsonDocument(c.metrics).toJson(QJsonDocument::Compact)));
    q.bindValue(QStringLiteral(":feedback"), jsonText(c.feedback));
    q.bindValue(QStringLiteral(":flags"), jsonText(c.flags));
    q.bindValue(QStringLiteral(":plan_model"), nn(c.planModel));
    q.bindValue(QStringLiteral(":code_model"), nn(c.codeModel));
    q.bindValue(QStringLiteral(":error"), nn(c.error));
    q.bindValue(QStringLiteral(":in_beam"), c.inBeam ? 1 : 0);
    q.bindValue(QStringLiteral(":plan_call_id"),
                c.planCallId > 0 ? QVariant(c.planCallId) : QVariant(QMetaType::fromType<qint64>()));
    q.bindValue(QStringLiteral(":plan_slot"), c.planSlot);
    q.bindValue(QStringLiteral(":sample"), c.sample);
    q.bindValue(QStringLiteral(":fix_of"), c.fixOf > 0 ? QVariant(c.fixOf) : QVariant(QMetaType::fromType<qint64>()));
    q.bindValue(QStringLiteral(":updated_at"), now());
}

Candidate readCandidate(const QSqlQuery &q)
{
    Candidate c;
    c.id = q.value(QStringLiteral("id")).toLongLong();
    c.runId = q.value(QStringLiteral("run_id")).toLongLong();
    c.parentId = q.value(QStringLiteral("parent_id")).toLongLong();
    c.iteration = q.value(QStringLiteral("iteration")).toInt();
    c.origin = candidateOriginFromString(q.value(QStringLiteral("origin")).toString());
    c.status = candidateStatusFromString(q.value(QStringLiteral("status")).toString());
    c.plan = q.value(QStringLiteral("plan")).toString();
    c.menuItem = q.value(QStringLiteral("menu_item")).toString();
    c.code = q.value(QStringLiteral("code")).toString();
    const QVariant score = q.value(QStringLiteral("score"));
    c.score = score.isNull() ? std::numeric_limits<double>::quiet_NaN() : score.toDouble();
    c.metrics = QJsonDocument::fromJson(q.value(QStringLiteral("metrics")).toString().toUtf8()).object();
    c.feedback = jsonList(q.value(QStringLiteral("feedback")));
    c.flags = jsonList(q.value(QStringLiteral("flags")));
    c.planModel = q.value(QStringLiteral("plan_model")).toString();
    c.codeModel = q.value(QStringLiteral("code_model")).toString();
    c.error = q.value(QStringLiteral("error")).toString();
    c.inBeam = q.value(QStringLiteral("in_beam")).toInt() != 0;
    c.planCallId = q.value(QStringLiteral("plan_call_id")).toLongLong();
    c.planSlot = q.value(QStringLiteral("plan_slot")).toInt();
    c.sample = q.value(QStringLiteral("sample")).toInt();
    c.fixOf = q.value(QStringLiteral("fix_of")).toLongLong();
    return c;
}

LlmCall readCall(const QSqlQuery &q)
{
    LlmCall c;
    c.id = q.value(QStringLiteral("id")).toLongLong();
    c.runId = q.value(QStringLiteral("run_id")).toLongLong();
    c.candidateId = q.value(QStringLiteral("candidate_id")).toLongLong();
    c.phase = q.value(QStringLiteral("phase")).toString();
    c.requestHash = q.value(QStringLiteral("request_hash")).toString();
    c.provider = q.value(QStringLiteral("provider")).toString();
    c.model = q.value(QStringLiteral("model")).toString();
    c.prompt = q.value(QStringLiteral("prompt")).toString();
    c.response = q.value(QStringLiteral("response")).toString();
    c.reasoning = q.value(QStringLiteral("reasoning")).toString();
    c.tokensIn = q.value(QStringLiteral("tokens_in")).toLongLong();
    c.tokensOut = q.value(QStringLiteral("tokens_out")).toLongLong();
    c.usd = q.value(QStringLiteral("usd")).toDouble();
    c.latencyMs = q.value(QStringLiteral("latency_ms")).toDouble();
    c.retries = q.value(QStringLiteral("retries")).toInt();
    c.attempts = q.value(QStringLiteral("attempts")).toString();
    c.status = q.value(QStringLiteral("status")).toString();
    c.error = q.value(QStringLiteral("error")).toString();
    c.createdAt = QDateTime::fromString(q.value(QStringLiteral("created_at")).toString(), Qt::ISODateWithMs);
    return c;
}

} // namespace

qint64 RunStore::createRun(const RunInfo &run)
{
    if (doomed())
        return 0;
    QSqlQuery &q = query(QStringLiteral("INSERT INTO runs (target, problem, agent, config_yaml, state, stop_reason, "
                                        "label, created_at, updated_at, iteration, metric, "
                                        "baseline_score, best_score, best_candidate_id, usd, tokens_in, tokens_out, "
                                        "llm_calls, schedule) VALUES (:target, :problem, "
                                        ":agent, :config_yaml, :state, :stop_reason, :label, :created_at, :updated_at, "
                                        ":iteration, :metric, :baseline_score, :best_score, "
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
        QSqlQuery &q = query(QStringLiteral("UPDATE runs SET target=:target, problem=:problem, agent=:agent, "
                                            "config_yaml=:config_yaml, state=:state, stop_reason=:stop_reason, "
                                            "label=:label, updated_at=:updated_at, iteration=:iteration, "
                                            "metric=:metric, baseline_score=:baseline_score, best_score=:best_score, "
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

namespace {

// The columns a call's answer fills: the same for a call stored whole and for one completed after it was
// recorded in flight.
void bindAnswer(QSqlQuery &q, const LlmCall &call)
{
    q.bindValue(QStringLiteral(":candidate_id"),
                call.candidateId > 0 ? QVariant(call.candidateId) : QVariant(QMetaType::fromType<qint64>()));
    q.bindValue(QStringLiteral(":response"), nn(call.response));
    q.bindValue(QStringLiteral(":reasoning"), nn(call.reasoning));
    q.bindValue(QStringLiteral(":tokens_in"), call.tokensIn);
    q.bindValue(QStringLiteral(":tokens_out"), call.tokensOut);
    q.bindValue(QStringLiteral(":usd"), call.usd);
    q.bindValue(QStringLiteral(":latency_ms"), call.latencyMs);
    q.bindValue(QStringLiteral(":retries"), call.retries);
    q.bindValue(QStringLiteral(":status"), nn(call.status));
    q.bindValue(QStringLiteral(":error"), nn(call.error));
    q.bindValue(QStringLiteral(":attempts"), nn(call.attempts));
}

} // namespace

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
    QSqlQuery &q = query(QStringLiteral("SELECT requested_state FROM runs WHERE id=:id"));
    q.bindValue(QStringLiteral(":id"), runId);
    if (!q.exec() || !q.next()) {
        q.finish();
        return {};
    }
    const QString request = q.value(0).toString();
    q.finish();
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
    QSqlQuery &q = query(
        QStringLiteral("SELECT %1 FROM run_requests WHERE %2 ORDER BY id").arg(s_requestColumns, condition));
    q.bindValue(QStringLiteral(":value"), value);
    if (!q.exec()) {
        fail(q.lastError());
        return out;
    }
    while (q.next())
        out << requestFromQuery(q);
    q.finish();
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
    QSqlQuery &q = query(QStringLiteral("SELECT %1 FROM run_requests WHERE id=:id").arg(s_requestColumns));
    q.bindValue(QStringLiteral(":id"), requestId);
    if (!q.exec() || !q.next()) {
        q.finish();
        return std::nullopt;
    }
    const RunRequest r = requestFromQuery(q);
    q.finish();
    return r;
}

QList<RunInfo> RunStore::runs()
{
    QList<RunInfo> out;
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    if (!q.exec(QStringLiteral("SELECT * FROM runs ORDER BY id"))) {
        fail(q.lastError());
        return out;
    }
    while (q.next())
        out << readRun(q);
    q.finish();
    return out;
}

std::optional<RunInfo> RunStore::run(qint64 runId)
{
    QSqlQuery &q = query(QStringLiteral("SELECT * FROM runs WHERE id=:id"));
    q.bindValue(QStringLiteral(":id"), runId);
    if (!q.exec() || !q.next()) {
        q.finish();
        return std::nullopt;
    }
    const RunInfo r = readRun(q);
    q.finish();
    return r;
}

QList<Candidate> RunStore::candidates(qint64 runId)
{
    QList<Candidate> out;
    QSqlQuery &q = query(QStringLiteral("SELECT * FROM candidates WHERE run_id=:run ORDER BY id"));
    q.bindValue(QStringLiteral(":run"), runId);
    if (!q.exec()) {
        fail(q.lastError());
        return out;
    }
    while (q.next())
        out << readCandidate(q);
    q.finish();
    return out;
}

std::optional<Candidate> RunStore::candidate(qint64 candidateId)
{
    QSqlQuery &q = query(QStringLiteral("SELECT * FROM candidates WHERE id=:id"));
    q.bindValue(QStringLiteral(":id"), candidateId);
    if (!q.exec() || !q.next()) {
        q.finish();
        return std::nullopt;
    }
    const Candidate c = readCandidate(q);
    q.finish();
    return c;
}

QList<LlmCall> RunStore::llmCalls(qint64 runId)
{
    QList<LlmCall> out;
    QSqlQuery &q = query(QStringLiteral("SELECT * FROM llm_calls WHERE run_id=:run ORDER BY id"));
    q.bindValue(QStringLiteral(":run"), runId);
    if (q.exec())
        while (q.next())
            out << readCall(q);
    q.finish();
    return out;
}

QList<LlmCall> RunStore::llmCalls(qint64 runId, const QString &phase)
{
    QList<LlmCall> out;
    QSqlQuery &q = query(QStringLiteral("SELECT * FROM llm_calls WHERE run_id=:run AND phase=:phase ORDER BY id"));
    q.bindValue(QStringLiteral(":run"), runId);
    q.bindValue(QStringLiteral(":phase"), phase);
    if (q.exec())
        while (q.next())
            out << readCall(q);
    q.finish();
    return out;
}

QList<LlmCall> RunStore::llmCallsForCandidate(qint64 candidateId)
{
    QList<LlmCall> out;
    QSqlQuery &q = query(QStringLiteral(
        "SELECT * FROM llm_calls WHERE candidate_id=:id OR id=(SELECT plan_call_id FROM candidates WHERE id=:id) "
        "ORDER BY id"));
    q.bindValue(QStringLiteral(":id"), candidateId);
    if (q.exec())
        while (q.next())
            out << readCall(q);
    q.finish();
    return out;
}

std::optional<LlmCall> RunStore::cachedResponse(const QString &requestHash, qint64 runId)
{
    if (runId <= 0)
        return cachedResponse(requestHash);
    QSqlQuery &q = query(QStringLiteral(
        "SELECT * FROM llm_calls WHERE request_hash=:hash AND run_id=:run AND status='ok' ORDER BY id LIMIT 1"));
    q.bindValue(QStringLiteral(":hash"), requestHash);
    q.bindValue(QStringLiteral(":run"), runId);
    if (!q.exec() || !q.next()) {
        q.finish();
        return std::nullopt;
    }
    const LlmCall c = readCall(q);
    q.finish();
    return c;
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
    QSqlQuery &q = query(QStringLiteral(
        "SELECT * FROM llm_calls WHERE run_id=:run AND status IN ('in_flight', 'unconfirmed') ORDER BY id"));
    q.bindValue(QStringLiteral(":run"), runId);
    if (q.exec())
        while (q.next())
            out << readCall(q);
    q.finish();
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

bool RunStore::readLease(qint64 runId, RunLease *lease)
{
    QSqlQuery &q = query(
        QStringLiteral("SELECT lease_pid, lease_host, lease_heartbeat, lease_inbox FROM runs WHERE id=:id"));
    q.bindValue(QStringLiteral(":id"), runId);
    if (!q.exec()) {
        fail(q.lastError());
        return false;
    }
    *lease = RunLease();
    if (q.next()) {
        lease->pid = q.value(0).toLongLong();
        lease->host = q.value(1).toString();
        lease->heartbeat = QDateTime::fromString(q.value(2).toString(), Qt::ISODateWithMs);
        lease->takesRequests = q.value(3).toString() == inboxOf(lease->pid, lease->host);
        lease->alive = leaseAlive(lease->pid, lease->host, lease->heartbeat);
    }
    q.finish();
    return true;
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
    q.bindValue(QStringLiteral(":pid"), ownPid());
    q.bindValue(QStringLiteral(":host"), hostName());
    q.bindValue(QStringLiteral(":now"), now());
    q.bindValue(QStringLiteral(":inbox"), inboxOf(ownPid(), hostName()));
    q.bindValue(QStringLiteral(":id"), runId);
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
        r.bindValue(QStringLiteral(":pid"), ownPid());
        r.bindValue(QStringLiteral(":host"), hostName());
        r.bindValue(QStringLiteral(":id"), runId);
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
    q.bindValue(QStringLiteral(":id"), runId);
    q.bindValue(QStringLiteral(":pid"), ownPid());
    q.bindValue(QStringLiteral(":host"), hostName());
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
    q.bindValue(QStringLiteral(":id"), runId);
    q.bindValue(QStringLiteral(":pid"), ownPid());
    q.bindValue(QStringLiteral(":host"), hostName());
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

std::optional<LlmCall> RunStore::cachedResponse(const QString &requestHash)
{
    QSqlQuery &q = query(
        QStringLiteral("SELECT * FROM llm_calls WHERE request_hash=:hash AND status='ok' ORDER BY id LIMIT 1"));
    q.bindValue(QStringLiteral(":hash"), requestHash);
    if (!q.exec() || !q.next()) {
        q.finish();
        return std::nullopt;
    }
    const LlmCall c = readCall(q);
    q.finish();
    return c;
}

QList<RunStore::ModelUsage> RunStore::usageByModel(qint64 runId)
{
    QList<ModelUsage> out;
    QSqlQuery &q = query(
        QStringLiteral("SELECT provider || '::' || model, count(*), sum(status = 'error'), sum(tokens_in), "
                       "sum(tokens_out), sum(usd), sum(latency_ms) "
                       "FROM llm_calls WHERE run_id = :run AND status NOT IN ('cached', 'in_flight', 'unconfirmed') "
                       "GROUP BY provider, model ORDER BY sum(usd) DESC, count(*) DESC"));
    q.bindValue(QStringLiteral(":run"), runId);
    if (q.exec()) {
        while (q.next())
            out << ModelUsage{q.value(0).toString(),   q.value(1).toLongLong(), q.value(2).toLongLong(),
                              q.value(3).toLongLong(), q.value(4).toLongLong(), q.value(5).toDouble(),
                              q.value(6).toDouble()};
    } else {
        fail(q.lastError());
    }
    q.finish();
    return out;
}

QList<StepResult> RunStore::evaluationSteps(qint64 candidateId)
{
    QList<StepResult> out;
    QSqlQuery &q = query(QStringLiteral("SELECT * FROM evaluations WHERE candidate_id=:id ORDER BY id"));
    q.bindValue(QStringLiteral(":id"), candidateId);
    if (!q.exec())
        return out;
    while (q.next()) {
        StepResult s;
        s.name = q.value(QStringLiteral("name")).toString();
        s.command = jsonList(q.value(QStringLiteral("command")));
        s.exitCode = q.value(QStringLiteral("exit_code")).toInt();
        s.timedOut = q.value(QStringLiteral("timed_out")).toInt() != 0;
        s.crashed = q.value(QStringLiteral("crashed")).toInt() != 0;
        s.durationMs = q.value(QStringLiteral("duration_ms")).toDouble();
        s.log = q.value(QStringLiteral("log")).toString();
        out << s;
    }
    q.finish();
    return out;
}

std::optional<qint64> RunStore::dataVersion()
{
    QSqlQuery &q = query(QStringLiteral("PRAGMA data_version"));
    if (!q.exec() || !q.next()) {
        fail(q.lastError());
        q.finish();
        return std::nullopt;
    }
    const qint64 version = q.value(0).toLongLong();
    q.finish();
    return version;
}

QList<RunStore::RunStamp> RunStore::runStamps()
{
    QList<RunStamp> out;
    QSqlQuery &q = query(QStringLiteral(
        "SELECT id, updated_at, state, lease_pid, lease_host, lease_heartbeat, lease_inbox FROM runs ORDER BY id"));
    if (!q.exec()) {
        fail(q.lastError());
        return out;
    }
    while (q.next()) {
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
    }
    q.finish();
    return out;
}

CandidateRows RunStore::candidatesSince(qint64 runId, const QString &since, qint64 afterId)
{
    CandidateRows out;
    // Two index lookups (the run's rows by updated_at, new rows by id), not a scan of the run's rows.
    QSqlQuery &q = query(
        QStringLiteral("SELECT * FROM candidates WHERE run_id=:run AND updated_at >= :since "
                       "UNION SELECT * FROM candidates WHERE run_id=:run2 AND id > :after ORDER BY id"));
    q.bindValue(QStringLiteral(":run"), runId);
    q.bindValue(QStringLiteral(":since"), nn(since));
    q.bindValue(QStringLiteral(":run2"), runId);
    q.bindValue(QStringLiteral(":after"), afterId);
    if (!q.exec()) {
        fail(q.lastError());
        return out;
    }
    while (q.next()) {
        out.candidates << readCandidate(q);
        out.updatedAt << q.value(QStringLiteral("updated_at")).toString();
    }
    q.finish();
    return out;
}

QList<RunStore::CallStamp> RunStore::callStamps(qint64 runId, qint64 fromId)
{
    QList<CallStamp> out;
    QSqlQuery &q = query(
        QStringLiteral("SELECT id, candidate_id, status FROM llm_calls WHERE run_id=:run AND id >= :from ORDER BY id"));
    q.bindValue(QStringLiteral(":run"), runId);
    q.bindValue(QStringLiteral(":from"), fromId);
    if (!q.exec()) {
        fail(q.lastError());
        return out;
    }
    while (q.next())
        out << CallStamp{q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toString()};
    q.finish();
    return out;
}

QList<std::pair<qint64, qint64>> RunStore::evaluationStepsAfter(qint64 runId, qint64 afterId)
{
    QList<std::pair<qint64, qint64>> out;
    QSqlQuery &q = query(
        QStringLiteral("SELECT e.id, e.candidate_id FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
                       "WHERE e.id > :after AND c.run_id = :run ORDER BY e.id"));
    q.bindValue(QStringLiteral(":after"), afterId);
    q.bindValue(QStringLiteral(":run"), runId);
    if (!q.exec()) {
        fail(q.lastError());
        return out;
    }
    while (q.next())
        out.append({q.value(0).toLongLong(), q.value(1).toLongLong()});
    q.finish();
    return out;
}

qint64 RunStore::lastEvaluationStepId()
{
    QSqlQuery &q = query(QStringLiteral("SELECT coalesce(max(id), 0) FROM evaluations"));
    const qint64 id = q.exec() && q.next() ? q.value(0).toLongLong() : 0;
    q.finish();
    return id;
}

int RunStore::requestsInFlight(qint64 runId)
{
    QSqlQuery &q = query(QStringLiteral("SELECT count(*) FROM llm_calls WHERE run_id=:run AND status='in_flight'"));
    q.bindValue(QStringLiteral(":run"), runId);
    const int n = q.exec() && q.next() ? q.value(0).toInt() : 0;
    q.finish();
    return n;
}

QList<qint64> RunStore::candidatesInEvaluation(qint64 runId)
{
    QList<qint64> ids;
    QSqlQuery &q = query(QStringLiteral("SELECT id FROM candidates WHERE run_id=:run AND status IN ('pending', "
                                        "'compiling', 'testing', 'benchmarking')"));
    q.bindValue(QStringLiteral(":run"), runId);
    if (q.exec())
        while (q.next())
            ids << q.value(0).toLongLong();
    q.finish();
    return ids;
}

} // namespace autocomp
