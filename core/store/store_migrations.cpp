#include "store/run_store.h"
#include "store/store_sql.h"

#include <QSqlDatabase>
#include <QThread>

namespace autocomp {

using namespace store_sql;

namespace {

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
        // The unit of a run's metric, stored with the run (RunInfo::metricUnit). Runs stored before are left empty
        // here (the target is not known to the store); fillMetricUnits() fills them from their targets.
        QStringLiteral(R"SQL(
ALTER TABLE runs ADD COLUMN metric_unit TEXT NOT NULL DEFAULT '';
)SQL"),
    };
    return s_migrations;
}

} // namespace

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

} // namespace autocomp
