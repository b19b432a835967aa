// `autocomp run`, `resume`, `pause`, `stop` and `study`: the commands that drive runs in this process or
// ask the process that drives them.
#include "cli_commands.h"
#include "cli_common.h"
#include "cli_keys.h"
#include "cli_run_control.h"
#include "cli_study.h"

#include "catalog/repository.h"
#include "model/run_config.h"
#include "search/run_manager.h"
#include "search/run_setup.h"
#include "search/search_engine.h"
#include "secrets/secret_store.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

namespace autocomp::cli {

namespace {

// alreadyEnded: `resume` of a run that had ended before, said as such.
void printSummary(const RunInfo &final, const QString &unit, bool reuseAcrossRuns, const QString &storePath,
                  bool alreadyEnded = false)
{
    // A reason with a log (a machine's failure: the step's whole output) keeps its lines, indented.
    const qsizetype newline = final.stopReason.indexOf(QLatin1Char('\n'));
    if (alreadyEnded)
        out() << "run " << final.id << " already finished (" << toString(final.state) << ": "
              << final.stopReason.left(newline) << ")\n";
    else
        out() << "run " << final.id << ": " << toString(final.state) << " (" << final.stopReason.left(newline) << ")\n";
    if (newline >= 0) {
        const QStringList lines = final.stopReason.mid(newline + 1).split(QLatin1Char('\n'));
        for (const QString &line : lines)
            out() << "    " << line << '\n';
    }
    if (final.bestCandidateId)
        out() << "baseline " << final.baselineScore << ' ' << unit << ", best " << final.bestScore << ' ' << unit
              << " (candidate " << final.bestCandidateId << "), speedup " << QString::number(final.speedup(), 'f', 2)
              << "x\n";
    out() << final.llmCalls << " LLM calls, " << final.tokensIn << " tokens in, " << final.tokensOut << " tokens out\n";
    if (reuseAcrossRuns)
        out() << "answers reused across runs (llm.reuse_answers: across_runs)\n";
    if (auto store = RunStore::open(storePath, {.create = false, .allowReadOnly = true}, nullptr))
        cli::printRunNotes(*store, final, out());
    out().flush();
}

void printSummary(const RunInfo &final, const RunSetup &setup)
{
    printSummary(final, setup.target.metricUnit, setup.config.llm.reuseAcrossRuns, setup.storePath);
}

// Drives one or more runs in this process (RunManager: one LLM client and one set of evaluation slots for
// all). resumeRunIds: 0 starts the setup as a new run.
int driveRuns(const QList<RunSetup> &setups, const QList<qint64> &resumeRunIds, const Args &args)
{
    RunManager manager;
    QList<ModelSpec> models;
    for (const RunSetup &setup : setups)
        models << setup.planModels << setup.codeModels;
    // Keys are read before any run starts, so the first request has one.
    manager.llmClient()->setApiKeyLookup(loadApiKeys(models, err()));
    for (const RunSetup &setup : setups)
        if (!setup.config.llm.proxy.isEmpty()) {
            manager.llmClient()->setProxy(setup.config.llm.proxy); // checked when the configuration was read
            break;
        }
    const bool several = setups.size() > 1;
    QList<SearchEngine *> engines;
    QHash<SearchEngine *, RunInfo> finals;
    for (qsizetype i = 0; i < setups.size(); ++i) {
        SearchEngine *engine = manager.create(setups.at(i));
        QObject::connect(engine, &SearchEngine::logMessage, [engine, several](const QString &message) {
            err() << QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")) << ' '
                  << (several ? QStringLiteral("[run %1] ").arg(engine->runId()) : QString())
                  << SecretStore::redact(message) << Qt::endl;
        });
        // A pause ends this process once no run is left running; `autocomp resume` continues the run later.
        QObject::connect(engine, &SearchEngine::runStateChanged, [engine, &finals](RunState state, const QString &) {
            if (state == RunState::Paused)
                finals[engine] = engine->runInfo();
        });
        engines << engine;
    }
    QObject::connect(&manager, &RunManager::runFinished,
                     [&finals](SearchEngine *engine, const RunInfo &run) { finals[engine] = run; });
    // Runs another process took over while this one was not heard from (stopped past the lease's timeout).
    QHash<SearchEngine *, RunLease> lostTo;
    for (SearchEngine *engine : std::as_const(engines))
        QObject::connect(engine, &SearchEngine::leaseLost,
                         [engine, &lostTo](const RunLease &holder) { lostTo[engine] = holder; });
    QObject::connect(&manager, &RunManager::idle, [] { QCoreApplication::exit(0); });
    int started = 0;
    bool failedToStart = false;
    for (qsizetype i = 0; i < engines.size(); ++i) {
        QString error;
        const qint64 resumeId = resumeRunIds.value(i);
        const bool ok = resumeId ? manager.resume(engines.at(i), resumeId, &error)
                                 : manager.start(engines.at(i), &error);
        if (!ok) {
            err() << "autocomp: " << (several ? QStringLiteral("%1: ").arg(setups.at(i).config.problem) : QString())
                  << error << Qt::endl;
            engines[i] = nullptr;
            failedToStart = true;
            continue;
        }
        ++started;
    }
    if (started == 0)
        return ExitError;
    {
        // Ctrl-C / SIGTERM end the runs cleanly as stopped (resumable).
        const cli::StopOnSignals stopOnSignals([&manager](const QString &reason) { manager.stopAll(reason); });
        if (manager.active() > 0)
            QCoreApplication::exec();
    }

    const bool json = args.flag(QStringLiteral("--json"));
    QJsonArray all;
    // The worst outcome: a run that did not start (1), failed (3), stopped or paused (4), finished (0).
    int exitCode = failedToStart ? ExitError : ExitOk;
    const auto rank = [](int code) {
        return code == ExitError ? 3 : code == cli::RunExitFailed ? 2 : code == cli::RunExitStopped ? 1 : 0;
    };
    for (qsizetype i = 0; i < engines.size(); ++i) {
        SearchEngine *engine = engines.at(i);
        if (!engine)
            continue;
        const RunInfo final = finals.value(engine);
        const auto lost = lostTo.constFind(engine);
        const int code = lost != lostTo.cend() ? int(cli::RunExitStopped) : cli::runExitCode(final);
        if (rank(code) > rank(exitCode))
            exitCode = code;
        if (lost != lostTo.cend()) {
            // The run goes on in the other process: this one says so, and nothing of the run as it knew it.
            const QString holder = lost->held() ? QStringLiteral("pid %1 on %2").arg(lost->pid).arg(lost->host)
                                                : QStringLiteral("another process");
            if (json)
                all.append(QJsonObject{{QStringLiteral("run_id"), final.id},
                                       {QStringLiteral("driven_by"), holder},
                                       {QStringLiteral("driver_pid"), lost->pid},
                                       {QStringLiteral("driver_host"), lost->host},
                                       {QStringLiteral("lease_lost"), true}});
            else
                out() << "run " << final.id << " is driven by " << holder
                      << " now: this process lost the run's lease to it and stopped, writing nothing" << Qt::endl;
            continue;
        }
        if (json)
            all.append(runJson(final));
        else
            printSummary(final, setups.at(i));
    }
    if (json) {
        if (all.size() == 1 && !several)
            printJson(all.first().toObject());
        else {
            out() << QString::fromUtf8(QJsonDocument(all).toJson(QJsonDocument::Indented));
            out().flush();
        }
    }
    return exitCode;
}

int driveEngine(const RunSetup &setup, qint64 resumeRunId, const Args &args)
{
    return driveRuns({setup}, {resumeRunId}, args);
}

} // namespace

int cmdResume(const Args &args)
{
    bool ok = false;
    const qint64 runId = args.positional.value(1).toLongLong(&ok);
    if (!ok) {
        err() << "usage: autocomp resume RUN_ID [--store PATH] [--json]" << Qt::endl;
        return ExitUsage;
    }
    std::optional<RunInfo> run;
    {
        auto store = openStore(args, cli::StoreUse::Write);
        if (!store)
            return ExitError;
        run = store->run(runId);
    }
    if (!run) {
        err() << "autocomp: no run " << runId << " in " << storePath(args) << Qt::endl;
        return ExitError;
    }
    QStringList errors;
    const QString where = QStringLiteral("run %1's stored configuration").arg(runId);
    const auto config = RunConfig::fromYaml(run->configYaml.toUtf8(), where, &errors);
    if (run->state == RunState::Finished || run->state == RunState::Failed) {
        // Nothing to drive (nor its target needed): the run as it ended, with the exit status of that end.
        if (args.flag(QStringLiteral("--json"))) {
            QJsonObject o = runJson(*run);
            o.insert(QStringLiteral("already_finished"), true);
            printJson(o);
        } else {
            printSummary(*run, runUnit(*run), config && config->llm.reuseAcrossRuns, storePath(args), true);
        }
        return cli::runExitCode(*run);
    }
    std::optional<RunSetup> setup;
    if (config)
        setup = prepareRun(*config, run->configYaml.toUtf8(), Repository(), storePath(args), &errors);
    if (!setup) {
        for (const QString &e : errors)
            err() << "autocomp: " << e << Qt::endl;
        return ExitError;
    }
    setup->label = run->label;
    return driveEngine(*setup, runId, args);
}

int cmdControl(const Args &args)
{
    const QString command = args.positional.first();
    bool ok = false;
    const qint64 runId = args.positional.value(1).toLongLong(&ok);
    if (!ok) {
        err() << "usage: autocomp " << command << " RUN_ID [--store PATH]" << Qt::endl;
        return ExitUsage;
    }
    auto store = openStore(args, cli::StoreUse::Write);
    if (!store)
        return ExitError;
    return cli::controlRun(*store, runId, command, out(), err());
}

int cmdRun(const Args &args)
{
    if (args.positional.size() < 2) {
        err() << "usage: autocomp run CONFIG.yaml [CONFIG.yaml ...] [--store PATH] [--json]" << Qt::endl;
        return ExitUsage;
    }
    Repository repository;
    QList<RunSetup> setups;
    bool failed = false;
    for (const QString &configPath : args.positional.mid(1)) {
        QFile file(configPath);
        if (!file.open(QIODevice::ReadOnly)) {
            err() << "autocomp: " << configPath << ": cannot read: " << file.errorString() << Qt::endl;
            failed = true;
            continue;
        }
        const QByteArray yaml = file.readAll();
        QStringList errors;
        const auto config = RunConfig::fromYaml(yaml, configPath, &errors);
        std::optional<RunSetup> setup;
        if (config)
            setup = prepareRun(*config, yaml, repository, storePath(args), &errors);
        if (!setup) {
            for (const QString &e : errors)
                err() << "autocomp: " << e << Qt::endl;
            failed = true;
            continue;
        }
        setup->label = args.option(QStringLiteral("--label"));
        setups << *setup;
    }
    // Nothing starts unless every configuration is valid.
    if (failed)
        return ExitError;
    return driveRuns(setups, QList<qint64>(setups.size(), 0), args);
}

int cmdStudy(const Args &args)
{
    if (args.positional.size() != 2) {
        err() << "usage: autocomp study STUDY.yaml [--store PATH] [--dry-run] [--report] [--csv PATH] [--parallel N]"
              << Qt::endl;
        return ExitUsage;
    }
    cli::StudyOptions options;
    options.studyPath = args.positional.at(1);
    options.storePath = storePath(args);
    options.csvPath = args.option(QStringLiteral("--csv"));
    options.dryRun = args.flag(QStringLiteral("--dry-run"));
    options.reportOnly = args.flag(QStringLiteral("--report"));
    if (args.options.contains(QStringLiteral("--parallel"))) {
        bool ok = false;
        options.parallel = args.option(QStringLiteral("--parallel")).toInt(&ok);
        if (!ok || options.parallel < 1) {
            err() << "autocomp study: --parallel needs a number of runs (1 or more)" << Qt::endl;
            return ExitUsage;
        }
    }
    return cli::runStudy(options, out(), err());
}

} // namespace autocomp::cli
