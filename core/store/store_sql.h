#pragma once

#include "model/candidate.h"
#include "model/llm_call.h"
#include "model/run_info.h"
#include "model/run_request.h"

#include <QDateTime>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QStringList>
#include <QVariant>

// The SQL side of RunStore, shared by its source files (run_store.cpp, store_migrations.cpp, run_store_leases.cpp,
// run_store_follow.cpp) and by nothing else: how values become columns and rows become values, and how SQLite's
// errors are worded.
namespace autocomp::store_sql {

// PRAGMA application_id marks a file as ours ("ACWB").
constexpr qint64 s_applicationId = 0x41435742;
// How often opening a store tries again where SQLite stays busy past its busy timeout.
constexpr int s_busyRetries = 8;

// SQLite's primary result codes that a user can act on, as "kind: PATH: SQLite's words"; other errors in SQLite's
// words alone.
QString classify(const QSqlError &error, const QString &path);
bool isBusy(const QSqlError &error); // SQLITE_BUSY or SQLITE_LOCKED

QString jsonText(const QStringList &list);
QStringList jsonList(const QVariant &value);
// NaN is stored as NULL.
QVariant nullableDouble(double value);
// Qt binds a null QString as SQL NULL; our text columns are NOT NULL.
QString nn(const QString &text);
// The time stamps of rows: UTC, ISO with milliseconds.
QString now();

QString hostName();
qint64 ownPid();
// Whether the process that holds a lease still drives the run: its heartbeat is recent and, on this host, it lives.
bool leaseAlive(qint64 pid, const QString &host, const QDateTime &heartbeat);
// The lease_inbox value of a holder that takes run requests.
QString inboxOf(qint64 pid, const QString &host);
bool writableByUs(const QString &path);

// Rows to values and values to bound parameters (the named parameters are the column names).
void bindRun(QSqlQuery &q, const RunInfo &run);
RunInfo readRun(const QSqlQuery &q);
void bindCandidate(QSqlQuery &q, const Candidate &c);
Candidate readCandidate(const QSqlQuery &q);
LlmCall readCall(const QSqlQuery &q);
// The columns a call's answer fills: the same for a call stored whole and for one completed after it was
// recorded in flight.
void bindAnswer(QSqlQuery &q, const LlmCall &call);
// A row of s_requestColumns.
RunRequest requestFromQuery(const QSqlQuery &q);
extern const QString s_requestColumns;

} // namespace autocomp::store_sql
