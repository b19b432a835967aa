#pragma once

#include "cli_run_control.h"

#include "model/candidate.h"
#include "model/run_info.h"
#include "store/run_store.h"

#include <QHash>
#include <QJsonObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QTextStream>

#include <memory>

// What every command of `autocomp` shares: its parsed arguments, the exit statuses, stdout and stderr as
// streams, how a command opens the store its options name, and how a run and a candidate are printed as JSON.
namespace autocomp::cli {

enum ExitCode {
    ExitOk = 0,
    ExitError = 1,
    ExitUsage = 2,
    ExitNotCorrect = 3
}; // 4 (stopped or paused): cli::runExitCode

// One stream each for the whole process, so that what the commands write keeps its order.
QTextStream &out();
QTextStream &err();

// A command line as parseArgs (cli_main.cpp) leaves it: positional[0] is the command; options and flags are
// keyed with their dashes ("--store"), and only the ones the command declares can be there.
struct Args
{
    QStringList positional;
    QHash<QString, QString> options;
    QHash<QString, QStringList> lists; // every value of an option given several times
    QSet<QString> flags;

    QString option(const QString &name, const QString &fallback = {}) const { return options.value(name, fallback); }
    bool flag(const QString &name) const { return flags.contains(name); }
};

// --store, else the default store (RunStore::defaultPath).
QString storePath(const Args &args);
// The store of `args`, opened for `use`; the default store is made on first use. nullptr after a message on err().
std::unique_ptr<RunStore> openStore(const Args &args, StoreUse use);

// The unit stored with the run, else (a run stored before units were) the one its target declares.
QString runUnit(const RunInfo &r);
// The JSON of `runs --json`, `run --json` and `runs watch --json`; `full` adds a candidate's plan, code and log.
QJsonObject runJson(const RunInfo &r);
QJsonObject candidateJson(const Candidate &c, bool full);
// Indented, on out(), flushed.
void printJson(const QJsonObject &o);

} // namespace autocomp::cli
