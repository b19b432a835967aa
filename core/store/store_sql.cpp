#include "store/store_sql.h"

#include "model/run_lease.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlRecord>
#include <QSysInfo>

#include <cerrno>
#include <cmath>
#include <limits>

#include <signal.h>
#include <unistd.h>

namespace autocomp::store_sql {

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

QString nn(const QString &text) { return text.isNull() ? QString(QLatin1String("")) : text; }

QString now() { return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs); }

// The codes are sqlite3.h's primary result codes.
QString classify(const QSqlError &error, const QString &path)
{
    const int code = error.nativeErrorCode().toInt() & 0xff;
    QString text = error.databaseText().isEmpty() ? error.text() : error.databaseText();
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
    q.bindValue(QStringLiteral(":metric_unit"), nn(run.metricUnit));
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
    // A store older than schema 7 opened read-only (not upgraded) has no unit column.
    const int unit = q.record().indexOf(QStringLiteral("metric_unit"));
    r.metricUnit = unit >= 0 ? q.value(unit).toString() : QString();
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

} // namespace autocomp::store_sql
