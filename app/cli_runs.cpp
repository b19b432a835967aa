// `autocomp runs [list | show RUN_ID]` (watch: cli_watch.cpp).
#include "cli_commands.h"
#include "cli_common.h"
#include "cli_run_control.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace autocomp::cli {

int cmdRuns(const Args &args)
{
    auto store = openStore(args, cli::StoreUse::Read);
    if (!store)
        return ExitError;
    const QString sub = args.positional.value(1, QStringLiteral("list"));
    const bool json = args.flag(QStringLiteral("--json"));
    if (sub == QLatin1String("list")) {
        const QList<RunInfo> runs = store->runs();
        if (json) {
            QJsonArray array;
            for (const RunInfo &r : runs) {
                QJsonObject o = runJson(r);
                o.insert(QStringLiteral("state"), store->displayState(r));
                array.append(o);
            }
            out() << QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Indented));
        } else {
            out() << QStringLiteral("%1  %2  %3  %4  %5  %6\n")
                         .arg(QStringLiteral("id"), 5)
                         .arg(QStringLiteral("target"), -8)
                         .arg(QStringLiteral("problem"), -12)
                         .arg(QStringLiteral("state"), -11)
                         .arg(QStringLiteral("speedup"), 8)
                         .arg(QStringLiteral("started"));
            for (const RunInfo &r : runs)
                out() << QStringLiteral("%1  %2  %3  %4  %5  %6\n")
                             .arg(r.id, 5)
                             .arg(r.target, -8)
                             .arg(r.problem, -12)
                             .arg(store->displayState(r), -11)
                             .arg(r.bestScore > 0 ? QString::number(r.speedup(), 'f', 2) + QLatin1Char('x')
                                                  : QStringLiteral("-"),
                                  8)
                             .arg(r.createdAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
        }
        out().flush();
        return ExitOk;
    }
    if (sub == QLatin1String("show")) {
        bool ok = false;
        const qint64 id = args.positional.value(2).toLongLong(&ok);
        const auto run = ok ? store->run(id) : std::nullopt;
        if (!run) {
            err() << "autocomp: no run '" << args.positional.value(2) << "' in " << store->path() << Qt::endl;
            return ExitError;
        }
        if (args.options.contains(QStringLiteral("--candidate"))) {
            const auto c = store->candidate(args.option(QStringLiteral("--candidate")).toLongLong());
            if (!c || c->runId != run->id) {
                err() << "autocomp: run " << run->id << " has no candidate "
                      << args.option(QStringLiteral("--candidate")) << Qt::endl;
                return ExitError;
            }
            if (json) {
                printJson(candidateJson(*c, true));
            } else {
                out() << "candidate " << c->id << " (" << statusWord(*c) << ", parent " << c->parentId << ")\n\n"
                      << "plan:\n"
                      << c->plan << "\n\ncode:\n"
                      << c->code << '\n';
                if (!c->error.isEmpty())
                    out() << "\nerror:\n" << c->error << '\n';
                out().flush();
            }
            return ExitOk;
        }
        const QList<Candidate> candidates = store->candidates(run->id);
        if (json) {
            QJsonObject o = runJson(*run);
            QJsonArray array;
            for (const Candidate &c : candidates)
                array.append(candidateJson(c, false));
            o.insert(QStringLiteral("candidates"), array);
            o.insert(QStringLiteral("config_yaml"), run->configYaml);
            const QJsonObject notes = cli::runNotesJson(*store, *run);
            for (auto it = notes.begin(); it != notes.end(); ++it)
                o.insert(it.key(), it.value());
            printJson(o);
        } else {
            out() << "run " << run->id << ": " << run->target << '/' << run->problem << ", "
                  << store->displayState(*run) << " (" << run->stopReason << ")\n";
            out() << run->llmCalls << " LLM calls, $" << QString::number(run->usd, 'f', 4) << '\n';
            cli::printRunNotes(*store, *run, out());
            for (const Candidate &c : candidates)
                out() << QStringLiteral("  #%1 parent %2 it %3 %4 %5 %6 %7\n")
                             .arg(c.id, 4)
                             .arg(c.parentId, 4)
                             .arg(c.iteration)
                             .arg(toString(c.origin), -6)
                             .arg(statusWord(c), -15)
                             .arg(c.hasScore() ? QString::number(c.score, 'g', 4) : QStringLiteral("-"), 8)
                             .arg(c.inBeam ? QStringLiteral("beam") : QString());
            out().flush();
        }
        return ExitOk;
    }
    if (sub == QLatin1String("watch"))
        return cmdWatch(*store, args);
    err() << "usage: autocomp runs [list | show RUN_ID [--candidate ID] | watch RUN_ID] [--json]" << Qt::endl;
    return ExitUsage;
}

} // namespace autocomp::cli
